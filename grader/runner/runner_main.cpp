// The runner: the learner's code (or the reference, or a known-buggy variant) linked with
// the adapter bindings. The grader starts it in its sandbox, sends requests on fd 3 and
// reads responses on fd 4 (protocol.hpp), each answer carrying its request's id. Whatever
// the code under test prints goes to stdout/stderr, which the grader shows as the
// learner's output and never parses. A crash writes where it happened on fd 5.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "course/not_implemented.hpp"
#include "runner/bindings.hpp"
#include "runner/crash_handler.hpp"
#include "wire/heap.hpp"
#include "wire/protocol.hpp"

namespace {

using course::json;

// An exception answer: its type, its what(), and where it was thrown ("thrown_at", the
// stack's offsets for the grader to symbolize), or why that is not known.
json exception_answer(const std::string& what) {
  json answer = {
      {"status", "exception"}, {"type", course::current_exception_type()}, {"what", what}};
  std::vector<uint64_t> stack = course::current_exception_stack();
  if (!stack.empty())
    answer["thrown_at"] = std::move(stack);
  else
    answer["thrown_unrecorded"] = course::throws_recorded() ? "not_found" : "off";
  return answer;
}

json handle(const json& request) {
  const std::string type = request.value("type", "");
  try {
    if (type == "setup") {
      course::run_setup(request.value("setup", json::object()));
      return {{"status", "ok"}, {"output", json::object()}};
    }
    if (type != "case") return {{"status", "bad_request"}, {"what", "unknown request type \"" + type + "\""}};
    const std::string adapter = request.value("adapter", "");
    const auto& table = course::adapter_table();
    auto it = table.find(adapter);
    if (it == table.end())
      return {{"status", "bad_request"}, {"what", "this runner has no adapter \"" + adapter + "\""}};
    json output = it->second(request.value("input", json::object()));
    return {{"status", "ok"}, {"output", std::move(output)}};
  } catch (const course::NotImplemented& e) {
    return {{"status", "not_implemented"}, {"what", e.what()}};
  } catch (const course::BadInput& e) {
    return {{"status", "bad_request"}, {"what", e.what()}};
  } catch (const json::exception& e) {
    return {{"status", "bad_request"}, {"what", std::string("malformed input: ") + e.what()}};
  } catch (const std::exception& e) {
    return exception_answer(e.what());
  } catch (...) {
    return exception_answer("");
  }
}

// A string the library's serializer would copy unchanged and that is long enough to be
// worth copying at once: printable ASCII without '"' or '\\' (a tensor's base64).
constexpr size_t kLongString = 256;

bool plain_long_string(const json& j) {
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() < kLongString) return false;
  bool plain = true;  // no early exit: the loop vectorizes
  for (const char c : s) plain &= c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
  return plain;
}

// Whether j has a string long enough to be worth the walk below (plain or not).
bool holds_long_string(const json& j) {
  if (j.is_string()) return j.get_ref<const std::string&>().size() >= kLongString;
  if (!j.is_structured()) return false;
  return std::any_of(j.begin(), j.end(),
                     [](const json& element) { return holds_long_string(element); });
}

// Appends j as j.dump(-1, ' ', false, json::error_handler_t::replace) writes it, byte for
// byte, except that the plain long strings are copied as they are: the library's
// serializer decodes every byte of a string as UTF-8, about 6% of the CPU time to grade a
// decode stage (generate, paged-cache), whose answers are mostly tensors in base64.
void append_answer(const json& j, std::string& out) {
  if (plain_long_string(j)) {
    out += '"';
    out += j.get_ref<const std::string&>();
    out += '"';
    return;
  }
  if (!j.is_structured() || !holds_long_string(j)) {
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
    return;
  }
  const bool object = j.is_object();
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ',';
    first = false;
    if (object) {
      out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace);
      out += ':';
    }
    append_answer(it.value(), out);
  }
  out += object ? '}' : ']';
}

// Before any other static constructor, the learner's included: a crash in one is located too.
__attribute__((constructor(101))) void install_handlers_first() { course::install_crash_handler(); }

}  // namespace

int main() {
  if (fcntl(course::kRequestFd, F_GETFD) < 0 || fcntl(course::kResponseFd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "This program is the grader's runner; it is started by `grader`, which talks to it\n"
                 "on file descriptors 3 and 4. Run `grader --stage SLUG` instead.\n");
    return 2;
  }
  course::keep_freed_memory();
  // Keep the learner's prints in order with the cases they belong to.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  while (true) {
    std::optional<course::Frame> message;
    try {
      message = course::read_message(course::kRequestFd);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "runner: %s\n", e.what());
      return 3;
    }
    if (!message) return 0;  // the grader closed the channel: done
    json response;
    try {
      response = handle(json::parse(message->payload));
    } catch (const json::exception& e) {
      response = {{"status", "bad_request"}, {"what", std::string("request is not JSON: ") + e.what()}};
    }
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::string answer;
    append_answer(response, answer);
    if (!course::write_message(course::kResponseFd, message->id, answer)) return 3;
  }
}
