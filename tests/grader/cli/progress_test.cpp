// The learner's progress file: remembered between runs, forgiving when damaged.
#include "cli/progress.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "judge/stages.hpp"
#include "test_support.hpp"

using namespace course;
using testing_support::read_file;
using testing_support::TempDir;
using testing_support::write_file;

TEST(progress, missing_file_is_no_progress) {
  TempDir dir;
  Progress p = Progress::load(dir / "progress.json");
  EXPECT_TRUE(p.status.empty());
  EXPECT_EQ(p.state("cache-structure"), "not run");
}

TEST(progress, round_trips_through_its_file) {
  TempDir dir;
  Progress p;
  p.status["cache-structure"] = "passed";
  p.status["multi-layer-cache"] = "failing";
  p.save(dir / ".grader" / "progress.json");  // creates the folder
  Progress back = Progress::load(dir / ".grader" / "progress.json");
  EXPECT_EQ(back.state("cache-structure"), "passed");
  EXPECT_EQ(back.state("multi-layer-cache"), "failing");
  EXPECT_EQ(back.state("prefill"), "not run");
  EXPECT_FALSE(std::filesystem::exists(dir / ".grader" / "progress.json.tmp"));
}

TEST(progress, damaged_file_only_forgets) {
  TempDir dir;
  for (const char* text : {"", "{", "[1, 2]", "{\"stages\": 3}", "not json"}) {
    write_file(dir / "progress.json", text);
    EXPECT_TRUE(Progress::load(dir / "progress.json").status.empty()) << text;
  }
}

TEST(progress, first_unpassed_follows_the_stage_order) {
  Progress p;
  EXPECT_EQ(p.first_unpassed(), find_stage("cache-structure"));
  p.status["cache-structure"] = "passed";
  EXPECT_EQ(p.first_unpassed(), find_stage("multi-layer-cache"));
  p.status["multi-layer-cache"] = "failing";
  EXPECT_EQ(p.first_unpassed(), find_stage("multi-layer-cache"));
  for (const Stage& s : stage_table()) p.status[s.slug] = "passed";
  EXPECT_EQ(p.first_unpassed(), nullptr);
}

TEST(progress, list_shows_states_and_marks_the_next_stage) {
  Progress p;
  p.status["cache-structure"] = "passed";
  std::ostringstream out;
  print_stage_list(out, p);
  std::string text = out.str();
  std::istringstream lines(text);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_NE(first.find("cache-structure"), std::string::npos) << text;
  EXPECT_NE(first.find("passed"), std::string::npos) << text;
  EXPECT_EQ(first.find("<- next"), std::string::npos) << text;
  EXPECT_NE(second.find("multi-layer-cache"), std::string::npos) << text;
  EXPECT_NE(second.find("not run"), std::string::npos) << text;
  EXPECT_NE(second.find("<- next"), std::string::npos) << text;
}

TEST(progress, an_unwritable_file_gives_one_warning_and_saving_goes_on) {
  TempDir dir;
  write_file(dir / "a-file", "not a folder");
  Progress p;
  p.status["cache-structure"] = "passed";
  testing::internal::CaptureStderr();
  const bool first = p.save(dir / "a-file" / "progress.json");
  const bool second = p.save(dir / "a-file" / "other.json");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  EXPECT_NE(err.find("grader: warning: cannot write the progress file " + (dir / "a-file" / "progress.json").string()),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "once per run: " << err;
  EXPECT_TRUE(p.save(dir / "progress.json")) << "a good file still saves";
}

TEST(progress, a_fifo_in_the_way_is_refused_without_blocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "progress.json.tmp").c_str(), 0600), 0);
  Progress p;
  p.status["prefill"] = "failing";
  testing::internal::CaptureStderr();
  EXPECT_FALSE(p.save(dir / "progress.json"));
  testing::internal::GetCapturedStderr();
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  EXPECT_TRUE(Progress::load(dir / "fifo.json").status.empty()) << "read without waiting for a writer";
}

// How many hint tiers a learner opened is kept beside the verdicts, and shown by the list.
TEST(progress, hints_opened_round_trip_and_show_in_the_list) {
  TempDir dir;
  Progress p;
  p.status["cache-structure"] = "failing";
  p.hints_opened["cache-structure"] = 2;
  ASSERT_TRUE(p.save(dir / "progress.json"));
  Progress back = Progress::load(dir / "progress.json");
  EXPECT_EQ(back.hints(*find_stage("cache-structure")), 2);
  EXPECT_EQ(back.hints(*find_stage("prefill")), 0);
  std::ostringstream out;
  print_stage_list(out, back);
  std::istringstream lines(out.str());
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_NE(first.find("failing  hints 2/3"), std::string::npos) << out.str();
  EXPECT_EQ(second.find("hints"), std::string::npos) << out.str();
}

TEST(progress, a_damaged_hint_count_is_forgotten_and_a_large_one_is_capped) {
  TempDir dir;
  write_file(dir / "progress.json",
             R"({"stages": {"prefill": "passed"}, "hints": {"cache-structure": "two", "prefill": 99, "one-token": -1}})");
  Progress p = Progress::load(dir / "progress.json");
  EXPECT_EQ(p.state("prefill"), "passed");
  EXPECT_EQ(p.hints(*find_stage("cache-structure")), 0);
  EXPECT_EQ(p.hints(*find_stage("one-token")), 0);
  EXPECT_EQ(p.hints(*find_stage("prefill")), int(find_stage("prefill")->hints.size()));
  write_file(dir / "progress.json", R"({"stages": {"prefill": "passed"}, "hints": [1]})");
  EXPECT_EQ(Progress::load(dir / "progress.json").state("prefill"), "passed");
}

TEST(progress, list_shows_the_last_speed_measured) {
  TempDir dir;
  Progress p;
  p.record("speed", true, 11.46, 0.683);
  p.record("generate", true, 0, 0);  // no speed measured: none recorded
  p.save(dir / "progress.json");
  const Progress back = Progress::load(dir / "progress.json");
  EXPECT_EQ(back.state("speed"), "passed");
  ASSERT_EQ(back.speed.count("speed"), 1u);
  EXPECT_EQ(back.speed.count("generate"), 0u);
  std::ostringstream out;
  print_stage_list(out, back);
  const std::string text = out.str();
  const size_t line = text.find(" speed ");
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_NE(text.substr(line, text.find('\n', line) - line).find("11.5 tokens per CPU-second, 0.68 of the model's loop"),
            std::string::npos)
      << text;
}
