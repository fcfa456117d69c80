#include "cli/formats.hpp"

#include <cmath>
#include <sstream>

#include "cli/report.hpp"

namespace course {

namespace {

constexpr size_t kExercismMessageLimit = 65535;  // the interface's limit for a message

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

// At most `limit` bytes (so at most as many characters), whole UTF-8 characters, ending
// in the Exercism interface's note when something was cut.
std::string cut_output(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const std::string note = std::string("\n") + kExercismTruncated;
  size_t keep = limit > note.size() ? limit - note.size() : 0;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return text.substr(0, keep) + note;
}

// A hidden case as Exercism shows it: its `checks` sentence may quote the drawn input (the
// tokens of a decode), so neither is shown; the mismatches and the localization are.
CaseResult exercism_view(const CaseResult& c) {
  if (c.origin != CaseOrigin::hidden) return c;
  CaseResult shown = c;
  shown.checks = "not shown (a hidden case)";
  shown.input_summary = kHiddenInput;
  return shown;
}

// Exercism's test_code: what the case checks, and its input (and how to replay a random one).
std::string test_code(const CaseResult& c) {
  std::string code = "checks: " + c.checks + "\ninput: " + c.input_summary;
  if (!c.replay.empty()) code += "\nreplay: " + c.replay;
  return code;
}

// Gradescope wants seconds; a whole number, at least 1 for any run.
long long whole_seconds(double seconds) { return seconds <= 0 ? 0 : (long long)std::ceil(seconds); }

// The fields every Gradescope document carries: plain text, shown as written.
json gradescope_document(double score, const std::string& output, const json& tests,
                         double seconds) {
  return {{"score", score},
          {"execution_time", whole_seconds(seconds)},
          {"output", output},
          {"output_format", "text"},
          {"test_output_format", "text"},
          {"test_name_format", "text"},
          {"tests", tests}};
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

json gradescope_results(const std::vector<StageResult>& results, double execution_seconds) {
  json tests = json::array();
  double score = 0;
  for (const StageResult& r : results) {
    const double each = r.cases.empty() ? 0 : r.stage->points / double(r.cases.size());
    // The stage's share as one division of its points, so that a stage whose every case
    // passes adds exactly its points (adding `each` n times gives 9.999999999999998 for 10
    // points over 11 cases, and a full score of 199.99999999999994).
    int passed = 0;
    for (const CaseResult& c : r.cases) passed += c.status == CaseStatus::passed;
    if (!r.cases.empty()) score += r.stage->points * passed / double(r.cases.size());
    for (const CaseResult& c : r.cases) {
      const bool ok = c.status == CaseStatus::passed;
      std::string output =
          ok ? "checks: " + c.checks + "\n" + (c.note.empty() ? "" : c.note + "\n") : failure_text(c);
      output += output_text(c);
      tests.push_back({{"name", test_name(r, c)},
                       {"score", ok ? each : 0.0},
                       {"max_score", each},
                       {"status", ok ? "passed" : "failed"},
                       {"output", output},
                       {"output_format", "text"},
                       // Hidden cases: shown to the student once the grades are published.
                       {"visibility", c.origin == CaseOrigin::hidden ? "after_published" : "visible"}});
    }
  }
  json doc = gradescope_document(score, summary(results), tests, execution_seconds);
  // Stage speed's figures as a leaderboard (Gradescope shows it when the assignment has one).
  for (const StageResult& r : results)
    if (r.speed && r.speed->measured) {
      doc["leaderboard"] = json::array(
          {{{"name", "Tokens per CPU-second"}, {"value", std::round(r.speed->tokens_per_s * 10) / 10}},
           {{"name", "Of the model's own loop"}, {"value", std::round(r.speed->ratio * 100) / 100}},
           {{"name", "Of the memory's bound"},
            {"value", std::round(r.speed->bandwidth_fraction * 100) / 100}}});
    }
  return doc;
}

json gradescope_error(const std::string& message, double execution_seconds) {
  return gradescope_document(0, "The grader could not run: " + message, json::array(),
                             execution_seconds);
}

json gradescope_compile_error(const std::string& compiler_output, double execution_seconds) {
  double total = 0;
  for (const Stage& s : stage_table()) total += s.points;
  json test = {
      {"name", "compiles"},
      {"score", 0.0},
      {"max_score", total},
      {"status", "failed"},
      {"output", "The code does not compile. The compiler's first errors:\n\n" + compiler_output},
      {"output_format", "text"},
      {"visibility", "visible"}};
  return gradescope_document(0, "The code does not compile: no stage was graded.",
                             json::array({test}), execution_seconds);
}

json exercism_results(const std::vector<StageResult>& results) {
  json tests = json::array();
  bool all = !results.empty();
  for (const StageResult& r : results) {
    all = all && r.all_passed();
    for (const CaseResult& shown : r.cases) {
      const CaseResult c = exercism_view(shown);
      json t = {{"name", test_name(r, c)}, {"status", exercism_status(c.status)}};
      if (c.status != CaseStatus::passed)
        t["message"] = cut(failure_text(c), kExercismMessageLimit);
      if (!c.output.empty()) t["output"] = cut_output(c.output, kExercismOutputLimit);
      t["test_code"] = test_code(c);
      t["task_id"] = r.stage->number;
      tests.push_back(t);
    }
  }
  return {{"version", 3}, {"status", all ? "pass" : "fail"}, {"tests", tests}};
}

json exercism_error(const std::string& message) {
  return {{"version", 3},
          {"status", "error"},
          {"message", cut(message, kExercismMessageLimit)},
          {"tests", json::array()}};
}

}  // namespace course
