#include "cli/formats.hpp"

#include <sstream>

#include "cli/report.hpp"

namespace course {

namespace {

constexpr size_t kExercismOutputLimit = 500;     // the interface's limit per test
constexpr size_t kExercismMessageLimit = 65535;  // and for the top-level message

std::string test_name(const StageResult& r, const CaseResult& c) {
  return r.stage->slug + ": " + c.name;
}

// Plain text (no colour, no indent) of why a case failed.
std::string failure_text(const CaseResult& c) {
  std::ostringstream s;
  print_case_failure(s, c, TextStyle{}, "");
  return s.str();
}

std::string output_text(const CaseResult& c) {
  std::ostringstream s;
  print_case_output(s, c, TextStyle{}, "");
  return s.str();
}

std::string cut(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const std::string note = "\n... (cut)";
  size_t keep = limit > note.size() ? limit - note.size() : 0;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80)
    --keep;  // whole UTF-8 characters
  return text.substr(0, keep) + note;
}

std::string summary(const std::vector<StageResult>& results) {
  int passed = 0, total = 0;
  for (const StageResult& r : results) {
    passed += r.passed();
    total += int(r.cases.size());
  }
  return std::to_string(passed) + " of " + std::to_string(total) + " cases pass.";
}

const char* exercism_status(CaseStatus s) {
  switch (s) {
    case CaseStatus::passed:
      return "pass";
    case CaseStatus::failed:
    case CaseStatus::not_implemented:
      return "fail";
    default:
      return "error";  // crashed, timed out, threw, broke the runner
  }
}

}  // namespace

json gradescope_results(const std::vector<StageResult>& results) {
  json tests = json::array();
  int score = 0;
  for (const StageResult& r : results) {
    for (const CaseResult& c : r.cases) {
      const bool ok = c.status == CaseStatus::passed;
      score += ok;
      std::string output = ok ? "checks: " + c.checks + "\n" : failure_text(c);
      output += output_text(c);
      tests.push_back({{"name", test_name(r, c)},
                       {"score", ok ? 1 : 0},
                       {"max_score", 1},
                       {"status", ok ? "passed" : "failed"},
                       {"output", output},
                       {"visibility", "visible"}});
    }
  }
  return {{"score", score}, {"output", summary(results)}, {"tests", tests}};
}

json gradescope_error(const std::string& message) {
  return {
      {"score", 0}, {"output", "The grader could not run: " + message}, {"tests", json::array()}};
}

json exercism_results(const std::vector<StageResult>& results) {
  json tests = json::array();
  bool all = !results.empty();
  for (const StageResult& r : results) {
    all = all && r.all_passed();
    for (const CaseResult& c : r.cases) {
      json t = {{"name", test_name(r, c)}, {"status", exercism_status(c.status)}};
      if (c.status != CaseStatus::passed)
        t["message"] = cut(failure_text(c), kExercismMessageLimit);
      if (!c.output.empty()) t["output"] = cut(c.output, kExercismOutputLimit);
      tests.push_back(t);
    }
  }
  return {{"version", 2}, {"status", all ? "pass" : "fail"}, {"tests", tests}};
}

json exercism_error(const std::string& message) {
  return {{"version", 2},
          {"status", "error"},
          {"message", cut(message, kExercismMessageLimit)},
          {"tests", json::array()}};
}

}  // namespace course
