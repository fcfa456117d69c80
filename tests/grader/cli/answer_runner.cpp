// A runner that answers every case with a hostile or malformed answer, chosen by
// $KVCOURSE_ANSWER (cli_test.cpp): the grader must turn each into a failed case naming
// the cause, never crash, hang or exit 2.
//
//   deep        an output nested 100000 arrays deep
//   huge_number an output holding 1e400
//   bad_status  "status": 5
//   bad_what    an exception whose "what" is an object
//   big_float   an output whose values are tensors of 1e300 (beyond float32)
//   escapes     prints terminal escape sequences, then throws with one in its message
//   list_output an output that is a list where an object is expected
//
// A request's "id", when it has one, is echoed, so the answer reaches the grader's parsing.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "wire/protocol.hpp"
#include "wire/tensor.hpp"

namespace {

std::string answer_body(const std::string& mode) {
  if (mode == "deep") return R"("status": "ok", "output": {"caches": )" + std::string(100000, '[') +
                             std::string(100000, ']') + "}";
  if (mode == "huge_number") return R"("status": "ok", "output": {"caches": [1e400]})";
  if (mode == "bad_status") return R"("status": 5, "output": {})";
  if (mode == "bad_what") return R"("status": "exception", "type": "std::logic_error", "what": {"x": 1})";
  if (mode == "big_float")
    return R"("status": "ok", "output": {"caches": [{"keys": {"shape": [1], "dtype": "float32", "data": [1e300]}}]})";
  if (mode == "list_output") return R"("status": "ok", "output": [1])";
  if (mode == "escapes") {
    std::printf("\x1b[2J\x1b]0;owned\x07plain text\n");
    std::fflush(stdout);
    return R"("status": "exception", "type": "std::runtime_error", "what": "\u001b[31mred\u001b[0m")";
  }
  return R"("status": "bad_request", "what": "unknown KVCOURSE_ANSWER mode")";
}

}  // namespace

int main() {
  const char* env = std::getenv("KVCOURSE_ANSWER");
  const std::string mode = env ? env : "";
  while (true) {
    std::optional<course::Frame> request = course::read_message(course::kRequestFd);
    if (!request) return 0;
    const course::json r = course::json::parse(request->payload);
    std::string answer = "{";
    // A setup request gets a plain "ok", so that the case itself is answered by the mode.
    answer += r.value("type", "") == "setup" ? R"("status": "ok", "output": {})" : answer_body(mode);
    answer += "}";
    if (!course::write_message(course::kResponseFd, request->id, answer)) return 3;
  }
}
