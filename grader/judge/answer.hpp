// A runner's answer to a case, read the way the grader reads it (responses in
// wire/protocol.hpp). The answer comes from the code under test's process: any byte of
// it may be hostile, so it is parsed with limits (JSON nesting at most kMaxJsonDepth),
// every field's type is checked, and every problem is a sentence, never an exception.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge/diagnose.hpp"
#include "wire/json_bounded.hpp"

namespace course {

// The longest "what" or "type" kept from an answer; the rest is cut.
inline constexpr size_t kMaxAnswerText = 2000;

struct Answer {
  std::string problem;  // non-empty when the answer is malformed: "the runner's answer: ..."
  std::string status;   // "ok", "not_implemented", "exception", "bad_request", ...
  std::string what;     // "" when absent
  std::string type;     // "" when absent
  // An exception: where it was thrown (wire/protocol.hpp "thrown_at": offsets into the
  // runner's executable, innermost first), and when empty why ("not_found", "off", or
  // "" when the runner said nothing).
  std::vector<uint64_t> thrown_at;
  std::string thrown_unrecorded;
  json document;        // the whole answer; its "output" (when present) is what is compared
};

Answer parse_answer(const std::string& frame);

// What is said of an answer beyond its verdict, each part guarded: a helper that trips on
// an answer it did not foresee (throws) says nothing, and the grading goes on.
struct AnswerEvidence {
  std::string digest;               // a failed case: output_digest, for identification
  std::vector<std::string> where;   // a failed case: localize's lines
  std::string note;                 // a passed case: work_note
};
AnswerEvidence failed_answer_evidence(const Fixture& fixture, const json& actual);
std::string passed_answer_note(const Fixture& fixture, const json& actual);

}  // namespace course
