// The text report: what the code under test printed is shown with its control characters
// made visible, so it can never drive the terminal; the HTML report escapes it.
#include "cli/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/html_report.hpp"

using namespace course;

TEST(report, control_characters_become_visible_escapes) {
  EXPECT_EQ(visible_controls("plain text\twith a tab\n"), "plain text\twith a tab\n");
  EXPECT_EQ(visible_controls("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(visible_controls(std::string("a\0b\r\x7f", 5)), "a\\x00b\\x0d\\x7f");
  // C1 controls, as UTF-8 (U+009B is a one-character CSI) and as single bytes.
  EXPECT_EQ(visible_controls("\xc2\x9b" "31m"), "\\u009b31m");
  EXPECT_EQ(visible_controls("\x9b" "31m"), "\\x9b31m");
  // Text in other scripts stays as it is; bytes that are not UTF-8 do not.
  EXPECT_EQ(visible_controls("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(visible_controls("\xc3(\xed\xa0\x80\xff"), "\\xc3(\\xed\\xa0\\x80\\xff");
  EXPECT_EQ(visible_controls("end\xe2\x82"), "end\\xe2\\x82");
}

TEST(report, printed_output_and_messages_reach_the_text_report_escaped) {
  CaseResult c;
  c.name = "01-case";
  c.status = CaseStatus::exception;
  c.message = "the code under test threw std::runtime_error: \x1b[31mred";
  c.output = "\x1b[2Jcleared?\nline two\n";
  std::ostringstream out;
  print_case_failure(out, c, TextStyle{});
  print_case_output(out, c, TextStyle{});
  const std::string text = out.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("threw std::runtime_error: \\x1b[31mred"), std::string::npos) << text;
  EXPECT_NE(text.find("[your code] \\x1b[2Jcleared?"), std::string::npos) << text;
  EXPECT_NE(text.find("[your code] line two"), std::string::npos) << text;
}

// The HTML report quotes the code under test's messages and output: escaped, never markup.
TEST(html_report, what_the_code_under_test_said_is_escaped) {
  Stage stage;
  stage.number = 9;
  stage.slug = "continuous-batching";
  stage.title = "Continuous batching";
  StageResult r;
  r.stage = &stage;
  CaseResult c;
  c.name = "01-<b>case</b>";
  c.status = CaseStatus::failed;
  c.message = "steps: <script>alert(1)</script> & \x1b[31m";
  c.expected_output = {
      {"steps", {{{"prefilled", {0}}, {"decoded", json::array()}, {"free_blocks", 7}}}}};
  c.actual_output = {
      {"steps", {{{"prefilled", json::array()}, {"decoded", {0}}, {"free_blocks", 7}}}}};
  r.cases.push_back(c);
  const std::string html = html_report({r});
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
  EXPECT_EQ(html.find('\x1b'), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\x1b[31m"), std::string::npos)
      << html;
  // No script, and nothing fetched: every picture is inline.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  // The step's cells: prefilled in the reference, decoded in the learner's, both marked.
  EXPECT_NE(html.find(">P</text>"), std::string::npos) << html;
  EXPECT_NE(html.find(">D</text>"), std::string::npos) << html;
}

// A hidden case is never drawn: grading keeps no outputs for it (grade.cpp), and a stage
// whose failures have none says there is nothing to draw.
TEST(html_report, a_case_without_kept_outputs_is_described_not_drawn) {
  Stage stage;
  stage.number = 1;
  stage.slug = "cache-structure";
  stage.title = "One layer's KV cache";
  StageResult r;
  r.stage = &stage;
  CaseResult c;
  c.name = "h01";
  c.status = CaseStatus::failed;
  c.message = "caches[0].keys: 1 of 768 values differ";
  r.cases.push_back(c);
  const std::string html = html_report({r});
  EXPECT_NE(html.find("No output to draw"), std::string::npos) << html;
  EXPECT_EQ(html.find("<svg"), std::string::npos) << html;
}
