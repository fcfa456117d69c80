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

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not one (overlong
// forms, surrogates and code points beyond U+10FFFF are not).
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  const unsigned c = byte(0);
  const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return byte(k) >= lo && byte(k) <= hi; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const bool second = c == 0xe0 ? cont(1, 0xa0) : c == 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const bool second = c == 0xf0 ? cont(1, 0x90) : c == 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// After a case's name: where it comes from, unless it is one of the committed fixtures.
std::string origin_tag(CaseOrigin o) {
  return o == CaseOrigin::hidden ? " (hidden)" : o == CaseOrigin::random ? " (random)" : "";
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", s);
  return buf;
}

// The identified mistakes: bit for bit what each produces, on every graded case.
std::vector<std::string> identified_lines(const std::vector<Diagnosis>& ds, const TextStyle& style) {
  std::vector<std::string> lines;
  if (ds.empty()) return lines;
  Paint paint{style.color};
  lines.push_back(paint("33", ds.size() == 1
                                  ? "Identified: on every graded case your output is bit for bit what this known mistake gives:"
                                  : "Identified: on every graded case your output is bit for bit what each of these known mistakes gives:"));
  for (const Diagnosis& d : ds) {
    lines.push_back("  " + paint("33", "[" + d.id + (d.parameter.empty() ? "" : ": " + d.parameter) + "] " + d.title));
    lines.push_back("    " + d.explanation);
    lines.push_back("    read: " + d.lesson);
    if (style.hint_offer)
      if (const std::string offer = style.hint_offer(d); !offer.empty())
        lines.push_back("    " + offer);
  }
  return lines;
}

void print_identified(std::ostream& out, const std::vector<Diagnosis>& ds, const TextStyle& style,
                      const std::string& indent) {
  for (const std::string& line : identified_lines(ds, style)) out << indent << line << "\n";
}

}  // namespace

std::string visible_controls(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += char(c);
      ++i;
      continue;
    }
    const size_t len = c < 0x80 ? 0 : utf8_length(text, i);
    if (len == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));  // a C1 control
      out += buf;
      i += 2;
    } else if (len > 0) {
      out.append(text, i, len);
      i += len;
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);  // a C0 control, DEL, or a byte that is not UTF-8
      out += buf;
      ++i;
    }
  }
  return out;
}

// What the code under test printed during a case: shown, labelled, never interpreted.
void print_case_output(std::ostream& out, const CaseResult& c, const TextStyle& style, const std::string& indent) {
  if (c.output.empty()) return;
  out << indent << "printed by the code under test:\n";
  out << indent_lines(visible_controls(c.output), indent + style.output_label + " ");
  if (c.output_truncated) out << indent << style.output_label << " ... (more output was cut)\n";
}

FailureParts failure_parts(const CaseResult& c, const TextStyle& style, bool with_diagnoses) {
  Paint paint{style.color};
  FailureParts parts;
  // The message and the differences quote the code under test's answer: shown, never obeyed.
  parts.checks.push_back("checks: " + visible_controls(c.checks));
  parts.input.push_back("input:  " + visible_controls(c.input_summary));
  if (!c.replay.empty()) parts.input.push_back("replay: " + visible_controls(c.replay));
  parts.message.push_back(paint("31", visible_controls(c.message)));
  auto add_lines = [](std::vector<std::string>& to, const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) to.push_back(line);
  };
  for (size_t i = 0; i < c.mismatches.size(); ++i) {
    const Mismatch& m = c.mismatches[i];
    if (i > 0) parts.differences.push_back(visible_controls(m.path + ": " + m.summary));
    if (!m.detail.empty() && i < 2) add_lines(parts.differences, visible_controls(m.detail));
    if (i == 3 && c.mismatches.size() > 4) {
      parts.differences.push_back("... and " + std::to_string(c.mismatches.size() - 4) + " more differences");
      break;
    }
  }
  for (size_t i = 0; i < c.where.size(); ++i) {
    std::vector<std::string> lines;
    add_lines(lines, c.where[i]);
    for (size_t j = 0; j < lines.size(); ++j)
      parts.where.push_back((i == 0 && j == 0 ? "where: " : j == 0 ? "       " : "         ") + lines[j]);
  }
  if (with_diagnoses) parts.diagnoses = identified_lines(c.diagnoses, style);
  return parts;
}

void print_case_failure(std::ostream& out, const CaseResult& c, const TextStyle& style, const std::string& indent,
                        bool with_diagnoses) {
  const FailureParts parts = failure_parts(c, style, with_diagnoses);
  for (const auto* part : {&parts.checks, &parts.input, &parts.message, &parts.differences, &parts.where, &parts.diagnoses})
    for (const std::string& line : *part) out << indent << line << "\n";
}

void print_stage_text(std::ostream& out, const StageResult& r, const TextStyle& style) {
  Paint paint{style.color};
  out << paint("1", "Stage " + std::to_string(r.stage->number) + " · " + r.stage->slug + " · " + r.stage->title) << "\n";
  for (const CaseResult& c : r.cases) {
    bool ok = c.status == CaseStatus::passed;
    std::string mark = ok ? paint("32", "  PASS ") : paint("31", "  FAIL ");
    const std::string label = visible_controls(c.name) + origin_tag(c.origin);
    char name[160];
    std::snprintf(name, sizeof name, "%-34s", label.c_str());
    out << mark << (style.times ? std::string(name) + " " + seconds(c.seconds) : label) << "\n";
    if (ok && !c.note.empty()) out << "         " << visible_controls(c.note) << "\n";
    if (!ok) print_case_failure(out, c, style, "         ", false);
    print_case_output(out, c, style);
  }
  print_identified(out, r.identified, style, "  ");
  bool fresh = false;
  for (const CaseResult& c : r.cases) fresh = fresh || c.origin == CaseOrigin::random;
  if (fresh && !r.identified.empty())
    out << "  (fresh cases have no recorded answers of the mistakes: this rests on the other cases)\n";
  out << (r.all_passed() ? paint("32", "All " + std::to_string(r.cases.size()) + " cases pass.")
                         : paint("31", std::to_string(r.passed()) + " of " + std::to_string(r.cases.size()) + " cases pass."))
      << (style.times ? " (" + seconds(r.seconds) + ")" : "") << "\n";
}

namespace {

json diagnoses_json(const std::vector<Diagnosis>& ds) {
  json out = json::array();
  for (const Diagnosis& d : ds)
    out.push_back({{"id", d.id},
                   {"parameter", d.parameter},
                   {"title", d.title},
                   {"explanation", d.explanation},
                   {"lesson", d.lesson}});
  return out;
}

}  // namespace

json results_json(const std::vector<StageResult>& results) {
  json stages = json::array();
  bool all = !results.empty();
  for (const StageResult& r : results) {
    json cases = json::array();
    for (const CaseResult& c : r.cases) {
      json mismatches = json::array();
      for (const Mismatch& m : c.mismatches) mismatches.push_back(m.data);
      json diagnoses = diagnoses_json(c.diagnoses);
      cases.push_back({{"name", c.name},
                       {"origin", origin_name(c.origin)},
                       {"status", status_name(c.status)},
                       {"message", c.message},
                       {"checks", c.checks},
                       {"seconds", c.seconds},
                       {"mismatches", mismatches},
                       {"where", c.where},
                       {"diagnoses", diagnoses},
                       {"note", c.note},
                       {"output", c.output}});
      if (!c.replay.empty()) cases.back()["replay"] = c.replay;
    }
    all = all && r.all_passed();
    stages.push_back({{"slug", r.stage->slug},
                      {"number", r.stage->number},
                      {"title", r.stage->title},
                      {"passed", r.passed()},
                      {"total", r.cases.size()},
                      {"seconds", r.seconds},
                      {"identified", diagnoses_json(r.identified)},
                      {"cases", cases}});
  }
  return {{"passed", all}, {"stages", stages}};
}

}  // namespace course
