// The private channel between the grader and a runner. The runner reads requests on file
// descriptor 3 and writes responses on file descriptor 4; its stdout and stderr belong to
// the learner's code and are only ever shown, never parsed.
//
// A message is a 4-byte little-endian length followed by that many bytes of JSON.
//
// Requests:  {"type": "case", "case": NAME, "adapter": NAME, "input": {...}}
//            {"type": "setup", "setup": {...}}        prepare shared state (e.g. weights)
// Responses: {"status": "ok", "output": {...}}
//            {"status": "not_implemented", "what": "KVCache::append"}
//            {"status": "exception", "type": "std::out_of_range", "what": "..."}
//            {"status": "bad_request", "what": "..."}   the runner cannot serve the request
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>

namespace course {

inline constexpr int kRequestFd = 3;
inline constexpr int kResponseFd = 4;
inline constexpr uint32_t kMaxMessageBytes = 1u << 30;

// Blocking write of one whole message. Returns false when the other end is gone.
bool write_message(int fd, const std::string& payload);

// Blocking read of one whole message. Returns nullopt at a clean end of stream before the
// first byte; throws std::runtime_error on a truncated or oversized message.
std::optional<std::string> read_message(int fd);

// Incremental reader for the grader's poll loop: feed it bytes as they arrive.
class MessageReader {
 public:
  // Appends bytes; returns true once a whole message is buffered.
  bool feed(const char* data, size_t n);
  bool complete() const;
  std::string take();  // the message; resets the reader
  size_t buffered() const { return buffer_.size(); }
  bool oversized() const;

 private:
  std::string buffer_;
};

}  // namespace course
