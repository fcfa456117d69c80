// Fuzz target: the channel's framing (wire/protocol.hpp). The bytes are fed to the
// grader's MessageReader in chunks whose sizes come from the input itself, and read by
// the runner's read_message from a memory file; both must agree on every whole message,
// and neither may read past what it was given.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "wire/protocol.hpp"

namespace {

using Frames = std::vector<std::pair<uint64_t, std::string>>;  // (id, payload)

// The messages MessageReader finds, feeding it chunks of 1 to 16 bytes.
Frames by_reader(const std::string& bytes) {
  Frames out;
  course::MessageReader reader;
  size_t at = 0;
  while (at < bytes.size() && !reader.oversized()) {
    const size_t chunk = std::min<size_t>(bytes.size() - at, 1 + (uint8_t(bytes[at]) & 15));
    reader.feed(bytes.data() + at, chunk);
    at += chunk;
    while (reader.complete()) {
      course::Frame f = reader.take();
      out.emplace_back(f.id, std::move(f.payload));
    }
  }
  return out;
}

// The messages read_message finds, reading the bytes from a memory file.
Frames by_read_message(const std::string& bytes) {
  Frames out;
  const int fd = memfd_create("frames", 0);
  if (fd < 0) return out;
  if (::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()) && ::lseek(fd, 0, SEEK_SET) == 0) {
    try {
      while (auto f = course::read_message(fd)) out.emplace_back(f->id, std::move(f->payload));
    } catch (const std::runtime_error&) {  // truncated or oversized: stops there
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const Frames a = by_reader(bytes), b = by_read_message(bytes);
  if (a != b) std::abort();  // the two ends of the channel disagree on the framing
  return 0;
}
