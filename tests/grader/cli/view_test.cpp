// The watch screen: frames that fit the terminal and keep what matters in view.
#include "cli/view.hpp"

#include <gtest/gtest.h>

#include "judge/stages.hpp"

using namespace course;

namespace {

bool has(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

std::vector<std::string> numbered(const std::string& what, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(what + " " + std::to_string(i));
  return out;
}

// A stage with 8 cases: 5 pass, 3 fail; the first failure has many differences, a
// diagnosis and a flood of printed output.
StageResult busy_result() {
  StageResult r;
  r.stage = find_stage("one-token");
  for (int i = 0; i < 8; ++i) {
    CaseResult c;
    c.name = "0" + std::to_string(i + 1) + "-case";
    c.checks = "What this case checks, in a sentence long enough to need more than one line on a "
               "narrow terminal of eighty columns.";
    c.input_summary = "{\"tokens\": [464, 2068, 7586]}";
    c.status = i < 5 ? CaseStatus::passed : CaseStatus::failed;
    if (c.status == CaseStatus::failed) {
      c.message = "logits: 3 of 3 rows of 50257 values differ; first at step 0";
      Mismatch m;
      m.path = "logits";
      m.summary = c.message;
      for (int d = 0; d < 30; ++d) m.detail += "  BAD step 0, vocab " + std::to_string(d) + ": expected 1, got 2\n";
      c.mismatches.push_back(m);
      c.diagnoses.push_back({"dec.example", "", "an example mistake", "what in the output shows it",
                             "stages/03-one-token/lesson.md#mistake-example"});
      for (int l = 0; l < 50; ++l) c.output += "debug print " + std::to_string(l) + "\n";
    }
    r.cases.push_back(c);
  }
  return r;
}

}  // namespace

TEST(view, shrinks_the_least_important_sections_first) {
  std::vector<Section> sections = {{{"title"}, 0}, {numbered("detail", 10), 3}, {numbered("output", 10), 5},
                                   {{"keys"}, 0}};
  std::vector<std::string> frame = fit_frame(sections, Screen{8, 0});
  ASSERT_EQ(frame.size(), 8u);
  EXPECT_EQ(frame.front(), "title");
  EXPECT_EQ(frame.back(), "keys");
  EXPECT_TRUE(has(frame, "detail 4")) << "detail (priority 3) keeps lines while output (5) is dropped";
  EXPECT_FALSE(has(frame, "output 0"));
  EXPECT_TRUE(has(frame, "more lines"));
}

TEST(view, without_a_screen_size_nothing_is_shortened) {
  std::vector<Section> sections = {{numbered("a", 30), 2}, {numbered("b", 30), 0}};
  EXPECT_EQ(fit_frame(sections, Screen{}).size(), 60u);
}

TEST(view, a_verdict_fits_24_rows_with_the_first_failure_and_its_diagnosis) {
  const StageResult r = busy_result();
  const std::vector<std::string> footer = {"Watching src/ (inotify).", "Keys: n next stage · q quit"};
  std::vector<std::string> frame = verdict_frame(r, TextStyle{}, Screen{24, 80}, 0, footer);
  EXPECT_LE(frame.size(), 24u);
  for (const std::string& line : frame) EXPECT_LE(visible_width(line), 80u) << line;
  EXPECT_TRUE(has(frame, "Stage 3 · one-token")) << "the header stays";
  EXPECT_TRUE(has(frame, "06-case (failure 1 of 3")) << "the first failing case is shown in full";
  EXPECT_TRUE(has(frame, "logits: 3 of 3 rows")) << "its message stays";
  EXPECT_TRUE(has(frame, "[dec.example]")) << "its diagnosis stays";
  EXPECT_TRUE(has(frame, "lesson.md#mistake-example"));
  EXPECT_EQ(frame.back(), footer.back()) << "the keys stay, last";
}

TEST(view, e_moves_the_full_report_to_the_next_failure) {
  const StageResult r = busy_result();
  std::vector<std::string> frame = verdict_frame(r, TextStyle{}, Screen{24, 80}, 1, {"keys"});
  EXPECT_TRUE(has(frame, "07-case (failure 2 of 3")) << "focus 1 is the second failing case";
  frame = verdict_frame(r, TextStyle{}, Screen{24, 80}, 3, {"keys"});
  EXPECT_TRUE(has(frame, "06-case (failure 1 of 3")) << "the focus wraps around";
}

TEST(view, colour_codes_take_no_width_and_long_lines_are_cut) {
  EXPECT_EQ(visible_width("\033[31mred\033[0m"), 3u);
  EXPECT_EQ(visible_width("·—é"), 3u);
  std::vector<std::string> frame = fit_frame({{{"\033[31m" + std::string(100, 'x') + "\033[0m"}, 0}}, Screen{5, 20});
  ASSERT_EQ(frame.size(), 1u);
  EXPECT_EQ(visible_width(frame[0]), 20u);
  EXPECT_NE(frame[0].find("…"), std::string::npos);
  EXPECT_EQ(frame[0].substr(frame[0].size() - 4), "\033[0m") << "the colour is closed after a cut";
}

TEST(view, wraps_text_at_spaces) {
  std::vector<std::string> lines = wrap_text("one two three four five", 11, "> ", "  ");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "> one two");
  EXPECT_EQ(lines[1], "  three");
  EXPECT_EQ(lines[2], "  four five");
}

// Watch mode streams the verdict: from the first failing case on, the frame shows the
// cases graded so far and says that the others are still being graded.
TEST(view, a_stage_still_being_graded_shows_its_first_failure_and_says_so) {
  StageResult r = busy_result();
  r.expected_cases = r.cases.size() + 2;
  r.cases.resize(6);  // 5 passed, then the first failure
  std::vector<std::string> frame = verdict_frame(r, TextStyle{}, Screen{24, 80}, 0, {"grading"});
  EXPECT_TRUE(has(frame, "6 of 10 cases so far, 5 pass")) << "the tally says it is not over";
  EXPECT_TRUE(has(frame, "06-case")) << "the first failure is shown in full";
  EXPECT_TRUE(has(frame, "logits: 3 of 3 rows"));
  r.cases.resize(5);
  r.expected_cases = 0;  // finished: the usual tally
  frame = verdict_frame(r, TextStyle{}, Screen{24, 80}, 0, {"keys"});
  EXPECT_TRUE(has(frame, "all 5 cases pass"));
}
