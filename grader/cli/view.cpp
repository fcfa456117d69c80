#include "cli/view.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace course {

namespace {

std::string paint(bool on, const char* code, const std::string& text) {
  return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end == '\0' && n > 0 && n < 100000 ? int(n) : 0;
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Ends of an ANSI CSI sequence starting at line[i] (ESC [ ... final byte), or i if none.
size_t skip_escape(const std::string& line, size_t i) {
  if (line[i] != '\033' || i + 1 >= line.size() || line[i + 1] != '[') return i;
  size_t j = i + 2;
  while (j < line.size() && !(line[j] >= 0x40 && line[j] <= 0x7e)) ++j;
  return j < line.size() ? j + 1 : line.size();
}

// The line cut to `columns` visible characters, ending in "…" when something was cut.
std::string cut_to_width(const std::string& line, size_t columns) {
  if (columns == 0 || visible_width(line) <= columns) return line;
  std::string out;
  size_t shown = 0;
  bool coloured = false;
  for (size_t i = 0; i < line.size();) {
    size_t end = skip_escape(line, i);
    if (end != i) {
      out.append(line, i, end - i);
      coloured = true;
      i = end;
      continue;
    }
    if (!is_continuation_byte(line[i])) {
      if (shown + 1 == columns) break;  // room left for the ellipsis only
      ++shown;
    }
    out += line[i++];
  }
  return out + "…" + (coloured ? "\033[0m" : "");
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", s);
  return buf;
}

std::vector<const CaseResult*> failing_cases(const StageResult& r) {
  std::vector<const CaseResult*> out;
  for (const CaseResult& c : r.cases)
    if (c.status != CaseStatus::passed) out.push_back(&c);
  return out;
}

std::vector<std::string> case_lines(const StageResult& r, bool color, const CaseResult* focused) {
  std::vector<std::string> lines;
  for (const CaseResult& c : r.cases) {
    const bool ok = c.status == CaseStatus::passed;
    char name[96];
    std::snprintf(name, sizeof name, " %-34s %7s", c.name.c_str(), seconds(c.seconds).c_str());
    std::string line = (ok ? paint(color, "32", "  PASS") : paint(color, "31", "  FAIL")) + name;
    if (&c == focused) line += "  <- below";
    lines.push_back(line);
  }
  return lines;
}

// The learner's prints during a case, labelled; never interpreted.
std::vector<std::string> output_lines(const CaseResult& c, const TextStyle& style) {
  std::vector<std::string> lines;
  if (c.output.empty()) return lines;
  lines.push_back("printed by the code under test:");
  std::istringstream in(c.output);
  for (std::string line; std::getline(in, line);) lines.push_back(style.output_label + " " + line);
  if (c.output_truncated) lines.push_back(style.output_label + " ... (more output was cut)");
  return lines;
}

std::vector<std::string> wrap_all(const std::vector<std::string>& lines, size_t width, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& line : lines)
    for (std::string& w : wrap_text(line, width, prefix, prefix + "  ")) out.push_back(std::move(w));
  return out;
}

}  // namespace

Screen terminal_screen() {
  Screen s;
  struct winsize ws {};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
    s.rows = ws.ws_row;
    s.columns = ws.ws_col;
    return s;
  }
  s.rows = env_int("LINES");
  s.columns = env_int("COLUMNS");
  return s;
}

size_t visible_width(const std::string& line) {
  size_t n = 0;
  for (size_t i = 0; i < line.size();) {
    size_t end = skip_escape(line, i);
    if (end != i) {
      i = end;
      continue;
    }
    if (!is_continuation_byte(line[i])) ++n;
    ++i;
  }
  return n;
}

std::vector<std::string> wrap_text(const std::string& text, size_t width, const std::string& first_prefix,
                                   const std::string& prefix) {
  std::vector<std::string> out;
  std::string line = first_prefix;
  size_t used = visible_width(first_prefix);
  const size_t base = used;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const size_t w = visible_width(word);
    if (width > 0 && used > base && used + 1 + w > width) {
      out.push_back(line);
      line = prefix;
      used = visible_width(prefix);
    } else if (used > base) {
      line += ' ';
      ++used;
    }
    line += word;
    used += w;
  }
  out.push_back(line);
  return out;
}

std::vector<std::string> fit_frame(const std::vector<Section>& sections, const Screen& screen) {
  std::vector<std::vector<std::string>> kept;
  size_t total = 0;
  for (const Section& s : sections) {
    kept.push_back(s.lines);
    total += s.lines.size();
  }
  const size_t rows = size_t(std::max(screen.rows, 0));
  std::vector<bool> shrunk(sections.size(), false);
  while (rows > 0 && total > rows) {
    // The least important section that can still give lines; the later one on a tie.
    int pick = -1;
    for (size_t i = 0; i < sections.size(); ++i)
      if (sections[i].priority > 0 && !shrunk[i] && !kept[i].empty() &&
          (pick < 0 || sections[i].priority >= sections[size_t(pick)].priority))
        pick = int(i);
    if (pick < 0) break;
    std::vector<std::string>& lines = kept[size_t(pick)];
    shrunk[size_t(pick)] = true;
    const size_t excess = total - rows, have = lines.size();
    if (excess + 1 >= have) {  // nothing worth keeping with a marker: drop it whole
      total -= have;
      lines.clear();
      continue;
    }
    const size_t keep = have - excess - 1;
    const size_t left_out = have - keep;
    lines.resize(keep);
    lines.push_back("  … " + std::to_string(left_out) + " more line" + (left_out == 1 ? "" : "s"));
    total = total - have + lines.size();
  }
  std::vector<std::string> frame;
  for (const auto& lines : kept)
    for (const std::string& line : lines) frame.push_back(cut_to_width(line, size_t(std::max(screen.columns, 0))));
  if (rows > 0 && frame.size() > rows && !sections.empty()) {
    // Only must-keep sections are left and they still do not fit: keep the last section
    // (the keys) and as much of the rest as fits.
    const size_t tail = std::min(sections.back().lines.size(), rows);
    std::vector<std::string> cut(frame.begin(), frame.begin() + std::ptrdiff_t(rows - tail));
    cut.insert(cut.end(), frame.end() - std::ptrdiff_t(tail), frame.end());
    frame = std::move(cut);
  }
  return frame;
}

std::vector<std::string> verdict_frame(const StageResult& r, const TextStyle& style, const Screen& screen, int focus,
                                       const std::vector<std::string>& footer) {
  const bool color = style.color;
  const size_t width = size_t(std::max(screen.columns, 0));
  const std::vector<const CaseResult*> failing = failing_cases(r);
  const CaseResult* shown =
      failing.empty() ? nullptr : failing[size_t(((focus % int(failing.size())) + int(failing.size())) % int(failing.size()))];

  std::vector<Section> sections;
  std::string title = "Stage " + std::to_string(r.stage->number) + " · " + r.stage->slug + " · " + r.stage->title;
  std::string tally = r.all_passed() ? paint(color, "32", "all " + std::to_string(r.cases.size()) + " cases pass")
                                     : paint(color, "31", std::to_string(r.passed()) + " of " +
                                                              std::to_string(r.cases.size()) + " cases pass");
  if (r.partial())
    tally = paint(color, "33",
                  std::to_string(r.cases.size()) + " of " + std::to_string(r.expected_cases) +
                      " cases so far, " + std::to_string(r.passed()) + " pass");
  sections.push_back({{paint(color, "1", title) + " — " + tally + (style.times ? " (" + seconds(r.seconds) + ")" : "")}, 0});
  sections.push_back({case_lines(r, color, failing.size() > 1 ? shown : nullptr), 3});
  if (shown) {
    const FailureParts parts =
        failure_parts(*shown, TextStyle{false, style.times, style.output_label, style.hint_offer});
    std::string head = "── " + shown->name;
    if (failing.size() > 1) head += " (failure " + std::to_string(std::find(failing.begin(), failing.end(), shown) - failing.begin() + 1) +
                                    " of " + std::to_string(failing.size()) + "; e shows the next)";
    sections.push_back({{"", paint(color, "1", head)}, 0});
    std::vector<std::string> message;
    for (const std::string& line : wrap_all(parts.message, width, "  ")) message.push_back(paint(color, "31", line));
    sections.push_back({message, 0});
    std::vector<std::string> diagnoses;
    for (size_t i = 0; i < parts.diagnoses.size(); ++i) {
      // "Identified: ...", then per mistake "  [id] title", its explanation, its lesson and
      // perhaps the hint that covers it.
      const bool title_line = i == 0 || parts.diagnoses[i].rfind("  [", 0) == 0;
      for (const std::string& line : wrap_text(parts.diagnoses[i], width, "  ", "        "))
        diagnoses.push_back(title_line ? paint(color, "33", line) : line);
    }
    sections.push_back({diagnoses, 1});
    std::vector<std::string> where;
    for (const std::string& line : parts.where)
      for (const std::string& wrapped : wrap_text(line, width, "  ", "           ")) where.push_back(wrapped);
    sections.push_back({where, 2});
    sections.push_back({wrap_all(parts.checks, width, "  "), 2});
    std::vector<std::string> input;
    for (const std::string& line : parts.input) input.push_back("  " + line);
    sections.push_back({input, 4});
    std::vector<std::string> differences;
    for (const std::string& line : parts.differences) differences.push_back("  " + line);
    sections.push_back({differences, 3});
    std::vector<std::string> printed;
    for (const std::string& line : output_lines(*shown, style)) printed.push_back("  " + line);
    sections.push_back({printed, 5});
  } else if (!r.cases.empty() && r.all_passed()) {
    std::vector<std::string> printed;
    for (const CaseResult& c : r.cases)
      for (const std::string& line : output_lines(c, style)) printed.push_back("  " + line);
    sections.push_back({printed, 5});
  }
  std::vector<std::string> foot = {""};
  foot.insert(foot.end(), footer.begin(), footer.end());
  sections.push_back({foot, 0});
  return fit_frame(sections, screen);
}

std::vector<std::string> page_frame(const std::string& title, const std::vector<std::string>& body, const Screen& screen,
                                    const std::vector<std::string>& footer) {
  std::vector<Section> sections;
  sections.push_back({{title, ""}, 0});
  std::vector<std::string> text;
  const size_t width = size_t(std::max(screen.columns, 0));
  for (const std::string& line : body) {
    if (width == 0 || visible_width(line) <= width) {
      text.push_back(line);  // kept as it is: tables keep their columns
      continue;
    }
    for (std::string& w : wrap_text(line, width, "", "  ")) text.push_back(std::move(w));
  }
  sections.push_back({text, 1});
  std::vector<std::string> foot = {""};
  foot.insert(foot.end(), footer.begin(), footer.end());
  sections.push_back({foot, 0});
  return fit_frame(sections, screen);
}

}  // namespace course
