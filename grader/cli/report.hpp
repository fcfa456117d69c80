// Rendering results: text for a person, JSON for a machine.
#pragma once

#include <ostream>
#include <vector>

#include "judge/grade.hpp"

namespace course {

struct TextStyle {
  bool color = false;
  std::string output_label = "[your code]";  // prefix of each line the code under test printed
};

void print_stage_text(std::ostream& out, const StageResult& result, const TextStyle& style);

// The parts of one case's report, each line starting with `indent`: why a case failed
// (what it checks, its input, the message, the first differences, the likely mistakes),
// and what the code under test printed, labelled.
void print_case_failure(std::ostream& out, const CaseResult& c, const TextStyle& style,
                        const std::string& indent = "         ");

// The same report in parts, lines without indent, for a view that arranges them itself
// (the watch screen keeps the message and the diagnoses and shortens the rest to fit).
struct FailureParts {
  std::vector<std::string> checks;       // what the case checks
  std::vector<std::string> input;        // its input, on one line
  std::vector<std::string> message;      // why it did not pass
  std::vector<std::string> differences;  // the first differences, in detail
  std::vector<std::string> diagnoses;    // what the grader can say about the cause
};
FailureParts failure_parts(const CaseResult& c, const TextStyle& style);
void print_case_output(std::ostream& out, const CaseResult& c, const TextStyle& style,
                       const std::string& indent = "         ");

// {"stages": [{"slug", "title", "passed", "total", "seconds", "cases": [{"name", "status",
//   "message", "checks", "seconds", "mismatches": [...], "diagnoses": [{"id", ...}],
//   "output"}]}], "passed": bool}
json results_json(const std::vector<StageResult>& results);

}  // namespace course
