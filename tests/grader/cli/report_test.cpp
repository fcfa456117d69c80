// The text report: what the code under test printed is shown with its control characters
// made visible, so it can never drive the terminal.
#include "cli/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

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
