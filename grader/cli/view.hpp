// The watch screen: every verdict drawn as one frame that fits the terminal. A frame is a
// list of sections with priorities; when the terminal is too short, the least important
// sections shrink first (the learner's printed output, then the list of passing cases,
// then the details of the differences), so that the stage, the first failing case's
// message and what the grader says about its cause, and the keys always stay in view.
#pragma once

#include <string>
#include <vector>

#include "cli/report.hpp"
#include "judge/grade.hpp"

namespace course {

struct Screen {
  int rows = 0;     // 0: no limit (not a terminal): nothing is shortened
  int columns = 0;  // 0: no limit
};

// The terminal's size (stdout), else $LINES and $COLUMNS, else no limit.
Screen terminal_screen();

struct Section {
  std::vector<std::string> lines;
  int priority = 0;  // 0: never shortened; larger numbers shrink first
};

// The sections' lines in order, at most screen.rows of them and each at most
// screen.columns visible characters (colour codes do not count). A shortened section
// keeps its first lines and ends with a line saying how many were left out.
std::vector<std::string> fit_frame(const std::vector<Section>& sections, const Screen& screen);

// The verdict of one stage: a header, a line per case, the failing case number `focus`
// (counting failing cases from 0, wrapping around) in full, a line on the other failures,
// what the focused case printed, and `footer`.
std::vector<std::string> verdict_frame(const StageResult& result, const TextStyle& style,
                                       const Screen& screen, int focus,
                                       const std::vector<std::string>& footer);

// A page of text (the hint, the stage list) with a title and the footer.
std::vector<std::string> page_frame(const std::string& title, const std::vector<std::string>& body,
                                    const Screen& screen, const std::vector<std::string>& footer);

// Visible width of a line (ANSI colour sequences take none; UTF-8 counts by character).
size_t visible_width(const std::string& line);

// `text` broken into lines of at most `width` visible characters at spaces, the first
// starting with `first_prefix` and the others with `prefix` (0 width: no breaking).
std::vector<std::string> wrap_text(const std::string& text, size_t width, const std::string& first_prefix,
                                   const std::string& prefix);

}  // namespace course
