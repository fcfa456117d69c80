// The private channel between the grader and a runner. The runner reads requests on file
// descriptor 3 and writes responses on file descriptor 4; its stdout and stderr belong to
// the learner's code and are only ever shown, never parsed.
//
// A frame is a 4-byte little-endian payload length, an 8-byte little-endian request id,
// then that many bytes of JSON. The grader gives every request a new id; the runner
// answers with the id of the request it answers. The grader takes an answer only when
// its id is the one it waits for, and a frame with another id, a malformed frame, or
// bytes nobody asked for end that runner (grader/SANDBOX.md, "The channel").
//
// Requests:  {"type": "case", "case": NAME, "adapter": NAME, "input": {...}}
//            {"type": "setup", "setup": {...}}        prepare shared state (e.g. weights)
// Responses: {"status": "ok", "output": {...}}
//            {"status": "not_implemented", "what": "KVCache::append"}
//            {"status": "exception", "type": "std::out_of_range", "what": "...",
//             "thrown_at": [offsets]}   where it was thrown: crash_record.hpp's frames;
//             or "thrown_unrecorded": "not_found" (no stack kept for it) or "off"
//            {"status": "bad_request", "what": "..."}   the runner cannot serve the request
//
// A runner also has file descriptor 5, where its crash handler writes where it stopped
// (wire/crash_record.hpp); nothing else is written there.
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>

namespace course {

inline constexpr int kRequestFd = 3;
inline constexpr int kResponseFd = 4;
inline constexpr int kCrashFd = 5;
inline constexpr uint32_t kMaxMessageBytes = 1u << 30;
inline constexpr size_t kFrameHeaderBytes = 12;  // length (4) + id (8)

struct Frame {
  uint64_t id = 0;
  std::string payload;
};

// The header and payload of one frame, ready to write.
std::string encode_frame(uint64_t id, const std::string& payload);

// Blocking write of one whole frame. Returns false when the other end is gone.
bool write_message(int fd, uint64_t id, const std::string& payload);

// Blocking read of one whole frame. Returns nullopt at a clean end of stream before the
// first byte; throws std::runtime_error on a truncated or oversized frame.
std::optional<Frame> read_message(int fd);

// Incremental reader for the grader's poll loop: feed it bytes as they arrive. A frame
// whose announced length exceeds `max_payload` is refused as soon as its header is in.
class MessageReader {
 public:
  explicit MessageReader(size_t max_payload = kMaxMessageBytes) : max_payload_(max_payload) {}
  // Appends bytes; returns true once a whole frame is buffered.
  bool feed(const char* data, size_t n);
  bool complete() const;
  Frame take();  // the first frame; the bytes after it stay buffered
  size_t buffered() const { return buffer_.size(); }
  bool oversized() const;
  // The payload length the buffered header announces (0 before the header is in).
  uint32_t announced() const;

 private:
  std::string buffer_;
  size_t max_payload_;
};

}  // namespace course
