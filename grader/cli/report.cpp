#include "cli/report.hpp"

#include <cstdio>
#include <sstream>

namespace course {

namespace {

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& text) const {
    return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

std::string indent_lines(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += prefix + line + "\n";
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", s);
  return buf;
}

}  // namespace

// What the code under test printed during a case: shown, labelled, never interpreted.
void print_case_output(std::ostream& out, const CaseResult& c, const TextStyle& style, const std::string& indent) {
  if (c.output.empty()) return;
  out << indent << "printed by the code under test:\n";
  out << indent_lines(c.output, indent + style.output_label + " ");
  if (c.output_truncated) out << indent << style.output_label << " ... (more output was cut)\n";
}

FailureParts failure_parts(const CaseResult& c, const TextStyle& style) {
  Paint paint{style.color};
  FailureParts parts;
  parts.checks.push_back("checks: " + c.checks);
  parts.input.push_back("input:  " + c.input_summary);
  parts.message.push_back(paint("31", c.message));
  auto add_lines = [&](const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) parts.differences.push_back(line);
  };
  for (size_t i = 0; i < c.mismatches.size(); ++i) {
    const Mismatch& m = c.mismatches[i];
    if (i > 0) parts.differences.push_back(m.path + ": " + m.summary);
    if (!m.detail.empty() && i < 2) add_lines(m.detail);
    if (i == 3 && c.mismatches.size() > 4) {
      parts.differences.push_back("... and " + std::to_string(c.mismatches.size() - 4) + " more differences");
      break;
    }
  }
  for (const Diagnosis& d : c.diagnoses) {
    parts.diagnoses.push_back(paint("33", "likely mistake [" + d.id + "]: " + d.title));
    parts.diagnoses.push_back("  " + d.explanation);
    parts.diagnoses.push_back("  read: " + d.lesson);
  }
  return parts;
}

void print_case_failure(std::ostream& out, const CaseResult& c, const TextStyle& style, const std::string& indent) {
  const FailureParts parts = failure_parts(c, style);
  for (const auto* part : {&parts.checks, &parts.input, &parts.message, &parts.differences, &parts.diagnoses})
    for (const std::string& line : *part) out << indent << line << "\n";
}

void print_stage_text(std::ostream& out, const StageResult& r, const TextStyle& style) {
  Paint paint{style.color};
  out << paint("1", "Stage " + std::to_string(r.stage->number) + " · " + r.stage->slug + " · " + r.stage->title) << "\n";
  for (const CaseResult& c : r.cases) {
    bool ok = c.status == CaseStatus::passed;
    std::string mark = ok ? paint("32", "  PASS ") : paint("31", "  FAIL ");
    char name[128];
    std::snprintf(name, sizeof name, "%-34s", c.name.c_str());
    out << mark << name << " " << seconds(c.seconds) << "\n";
    if (!ok) print_case_failure(out, c, style);
    print_case_output(out, c, style);
  }
  out << (r.all_passed() ? paint("32", "All " + std::to_string(r.cases.size()) + " cases pass.")
                         : paint("31", std::to_string(r.passed()) + " of " + std::to_string(r.cases.size()) + " cases pass."))
      << " (" << seconds(r.seconds) << ")\n";
}

json results_json(const std::vector<StageResult>& results) {
  json stages = json::array();
  bool all = !results.empty();
  for (const StageResult& r : results) {
    json cases = json::array();
    for (const CaseResult& c : r.cases) {
      json mismatches = json::array();
      for (const Mismatch& m : c.mismatches) mismatches.push_back(m.data);
      json diagnoses = json::array();
      for (const Diagnosis& d : c.diagnoses)
        diagnoses.push_back({{"id", d.id}, {"title", d.title}, {"explanation", d.explanation}, {"lesson", d.lesson}});
      cases.push_back({{"name", c.name},
                       {"status", status_name(c.status)},
                       {"message", c.message},
                       {"checks", c.checks},
                       {"seconds", c.seconds},
                       {"mismatches", mismatches},
                       {"diagnoses", diagnoses},
                       {"output", c.output}});
    }
    all = all && r.all_passed();
    stages.push_back({{"slug", r.stage->slug},
                      {"number", r.stage->number},
                      {"title", r.stage->title},
                      {"passed", r.passed()},
                      {"total", r.cases.size()},
                      {"seconds", r.seconds},
                      {"cases", cases}});
  }
  return {{"passed", all}, {"stages", stages}};
}

}  // namespace course
