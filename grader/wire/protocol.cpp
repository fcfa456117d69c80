#include "wire/protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace course {

namespace {

uint64_t decode_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | uint8_t(p[i]);
  return v;
}

void encode_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xff);
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

// Reads exactly n bytes; returns how many were read before end of stream.
size_t read_all(int fd, char* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("read failed: ") + std::strerror(errno));
    }
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}

}  // namespace

std::string encode_frame(uint64_t id, const std::string& payload) {
  if (payload.size() > kMaxMessageBytes) throw std::runtime_error("message too large");
  std::string frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  encode_le(frame, payload.size(), 4);
  encode_le(frame, id, 8);
  frame += payload;
  return frame;
}

bool write_message(int fd, uint64_t id, const std::string& payload) {
  const std::string frame = encode_frame(id, payload);
  return write_all(fd, frame.data(), frame.size());
}

std::optional<Frame> read_message(int fd) {
  char header[kFrameHeaderBytes];
  size_t got = read_all(fd, header, sizeof header);
  if (got == 0) return std::nullopt;
  if (got < sizeof header) throw std::runtime_error("message truncated in its header");
  const uint64_t n = decode_le(header, 4);
  if (n > kMaxMessageBytes) throw std::runtime_error("message length " + std::to_string(n) + " is too large");
  Frame frame;
  frame.id = decode_le(header + 4, 8);
  // Grown as the bytes arrive, never to the announced length up front: a length prefix
  // alone must not cost a gigabyte (64 KiB more per read).
  std::string& payload = frame.payload;
  while (payload.size() < n) {
    const size_t have = payload.size(), chunk = std::min<size_t>(size_t(n) - have, size_t(64) << 10);
    payload.resize(have + chunk);
    if (read_all(fd, payload.data() + have, chunk) < chunk) throw std::runtime_error("message truncated");
  }
  return frame;
}

bool MessageReader::feed(const char* data, size_t n) {
  buffer_.append(data, n);
  // Once the frame's length is known and allowed, room for all of it at once.
  if (buffer_.size() >= kFrameHeaderBytes && !oversized()) buffer_.reserve(kFrameHeaderBytes + size_t(announced()));
  return complete();
}

uint32_t MessageReader::announced() const {
  return buffer_.size() >= 4 ? uint32_t(decode_le(buffer_.data(), 4)) : 0;
}

bool MessageReader::oversized() const {
  return buffer_.size() >= 4 && (announced() > kMaxMessageBytes || announced() > max_payload_);
}

bool MessageReader::complete() const {
  return buffer_.size() >= kFrameHeaderBytes && !oversized() &&
         buffer_.size() - kFrameHeaderBytes >= announced();
}

Frame MessageReader::take() {
  const uint32_t n = announced();
  Frame frame;
  frame.id = decode_le(buffer_.data() + 4, 8);
  frame.payload = buffer_.substr(kFrameHeaderBytes, n);
  buffer_.erase(0, kFrameHeaderBytes + size_t(n));
  return frame;
}

}  // namespace course
