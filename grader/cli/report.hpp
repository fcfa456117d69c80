// Rendering results: text for a person, JSON for a machine.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "judge/grade.hpp"

namespace course {

struct TextStyle {
  bool color = false;
  bool times = true;  // seconds per case and stage (off: --no-times, for stable transcripts)
  std::string output_label = "[your code]";  // prefix of each line the code under test printed
  // The line offering the hint tier that addresses an identified mistake (hints.hpp); empty
  // function or empty line: none. Left empty for the autograders' formats, which never
  // mention hints.
  std::function<std::string(const Diagnosis&)> hint_offer;
};

void print_stage_text(std::ostream& out, const StageResult& result, const TextStyle& style);

// `text` with its control characters made visible, so that what the code under test
// printed (or put in an exception's message) cannot move the cursor, recolour or retitle
// the terminal: C0 controls other than newline and tab, and DEL, become \x1b-style escapes;
// C1 controls (U+0080 .. U+009F) become \u009b; bytes that are not UTF-8 become \xff.
// (A backslash the code printed itself is shown as it is.)
std::string visible_controls(const std::string& text);

// The parts of one case's report, each line starting with `indent`: why a case failed
// (what it checks, its input, the message, the first differences, where the output first
// departs, and with `with_diagnoses` the identified mistakes), and what the code under test
// printed, labelled.
void print_case_failure(std::ostream& out, const CaseResult& c, const TextStyle& style,
                        const std::string& indent = "         ", bool with_diagnoses = true);

// The same report in parts, lines without indent and with control characters made
// visible, for a view that arranges them itself (the watch screen keeps the message and
// the diagnoses and shortens the rest to fit).
struct FailureParts {
  std::vector<std::string> checks;       // what the case checks
  std::vector<std::string> input;        // its input, on one line
  std::vector<std::string> message;      // why it did not pass
  std::vector<std::string> differences;  // the first differences, in detail
  std::vector<std::string> where;        // where the output first departs (localize)
  std::vector<std::string> diagnoses;    // the identified mistakes (with_diagnoses)
};
FailureParts failure_parts(const CaseResult& c, const TextStyle& style, bool with_diagnoses = true);
void print_case_output(std::ostream& out, const CaseResult& c, const TextStyle& style,
                       const std::string& indent = "         ");

// {"stages": [{"slug", "title", "passed", "total", "seconds", "identified": [{"id", ...}],
//   "cases": [{"name", "origin": "visible" | "hidden" | "random", "status", "message",
//   "checks", "seconds", "mismatches": [...], "where": ["..."], "diagnoses": [{"id",
//   "parameter", "title", "explanation", "lesson"}], "note", "output", "replay" (random
//   cases only)}]}], "passed": bool}. No case's input is in it.
json results_json(const std::vector<StageResult>& results);

}  // namespace course
