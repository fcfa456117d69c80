// A runner's answer to a case, read the way the grader reads it (responses in
// wire/protocol.hpp). The answer comes from the code under test's process: any byte of
// it may be hostile, so it is parsed with limits (JSON nesting at most kMaxJsonDepth),
// every field's type is checked, and every problem is a sentence, never an exception.
#pragma once

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
  json document;        // the whole answer; its "output" (when present) is what is compared
};

Answer parse_answer(const std::string& frame);

// The stage's diagnoses of a failed case. A detector that trips on an answer it did not
// foresee (throws) gives none: the case has failed already, and the grading goes on.
std::vector<Diagnosis> diagnose_answer(Diagnoser diagnose, const CaseView& view);

}  // namespace course
