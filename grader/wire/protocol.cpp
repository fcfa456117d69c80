#include "wire/protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace course {

namespace {

uint32_t decode_length(const char* p) {
  return uint32_t(uint8_t(p[0])) | uint32_t(uint8_t(p[1])) << 8 | uint32_t(uint8_t(p[2])) << 16 |
         uint32_t(uint8_t(p[3])) << 24;
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

bool write_message(int fd, const std::string& payload) {
  if (payload.size() > kMaxMessageBytes) throw std::runtime_error("message too large");
  char header[4];
  uint32_t n = uint32_t(payload.size());
  for (int i = 0; i < 4; ++i) header[i] = char((n >> (8 * i)) & 0xff);
  return write_all(fd, header, 4) && write_all(fd, payload.data(), payload.size());
}

std::optional<std::string> read_message(int fd) {
  char header[4];
  size_t got = read_all(fd, header, 4);
  if (got == 0) return std::nullopt;
  if (got < 4) throw std::runtime_error("message truncated in its length prefix");
  uint32_t n = decode_length(header);
  if (n > kMaxMessageBytes) throw std::runtime_error("message length " + std::to_string(n) + " is too large");
  // Grown as the bytes arrive, never to the announced length up front: a length prefix
  // alone must not cost a gigabyte (64 KiB more per read).
  std::string payload;
  while (payload.size() < n) {
    const size_t have = payload.size(), chunk = std::min<size_t>(n - have, size_t(64) << 10);
    payload.resize(have + chunk);
    if (read_all(fd, payload.data() + have, chunk) < chunk) throw std::runtime_error("message truncated");
  }
  return payload;
}

bool MessageReader::feed(const char* data, size_t n) {
  buffer_.append(data, n);
  return complete();
}

bool MessageReader::oversized() const {
  return buffer_.size() >= 4 && decode_length(buffer_.data()) > kMaxMessageBytes;
}

bool MessageReader::complete() const {
  return buffer_.size() >= 4 && !oversized() && buffer_.size() - 4 >= decode_length(buffer_.data());
}

std::string MessageReader::take() {
  uint32_t n = decode_length(buffer_.data());
  std::string payload = buffer_.substr(4, n);
  buffer_.erase(0, 4 + size_t(n));
  return payload;
}

}  // namespace course
