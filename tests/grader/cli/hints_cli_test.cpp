// `grader --hint`: a stage's hints one tier at a time, remembered in the progress file,
// counted by `--list` and never part of an autograder's results.
#include <gtest/gtest.h>

#include "judge/stages.hpp"
#include "test_support.hpp"

using testing_support::has;
using testing_support::bin;
using testing_support::read_file;
using testing_support::run;
using testing_support::TempDir;

namespace {

std::string grader(const std::string& args, const TempDir& state) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " +
         bin("grader") + " " + args;
}

// `text` with every run of white space made one space: the hints are wrapped for the terminal.
std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

// The first line of tier `tier` (from 1) of `slug`'s hints, as the manifest has it.
std::string tier_text(const std::string& slug, int tier) {
  const std::string& text = course::find_stage(slug)->hints[size_t(tier - 1)];
  return squeeze(text.substr(0, text.find('\n')));
}

}  // namespace

TEST(hints_cli, hint_twice_prints_tier_1_then_tier_2_and_list_counts_them) {
  TempDir state;
  auto first = run(grader("--hint", state));
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(has(first.output, "Hint 1 of 3 for stage 1, cache-structure: the idea"))
      << first.output;
  EXPECT_TRUE(has(squeeze(first.output), tier_text("cache-structure", 1))) << first.output;
  EXPECT_FALSE(has(squeeze(first.output), tier_text("cache-structure", 2))) << first.output;
  EXPECT_TRUE(has(first.output, "2 more tiers")) << first.output;

  auto second = run(grader("--hint", state));
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has(second.output, "Hint 2 of 3 for stage 1, cache-structure: the approach"))
      << second.output;
  EXPECT_TRUE(has(squeeze(second.output), tier_text("cache-structure", 2))) << second.output;
  EXPECT_FALSE(has(squeeze(second.output), tier_text("cache-structure", 1))) << second.output;

  auto list = run(grader("--list", state));
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(has(list.output, "hints 2/3")) << list.output;
  EXPECT_EQ(list.output.find("hints"), list.output.rfind("hints"))
      << "only stage 1's were opened:\n"
      << list.output;
}

TEST(hints_cli, each_stage_counts_its_own_and_the_last_tier_stays) {
  TempDir state;
  for (int tier = 1; tier <= 3; ++tier) {
    auto r = run(grader("--hint --stage prefill", state));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(has(r.output, "Hint " + std::to_string(tier) + " of 3 for stage 4, prefill"))
        << r.output;
  }
  auto again = run(grader("--hint --stage prefill", state));
  EXPECT_TRUE(has(again.output, "Every hint of stage 4 is open; the last one again."))
      << again.output;
  EXPECT_TRUE(has(again.output, "Hint 3 of 3 for stage 4, prefill: near code")) << again.output;
  auto other = run(grader("--hint --stage one-token", state));
  EXPECT_TRUE(has(other.output, "Hint 1 of 3 for stage 3, one-token")) << other.output;
  EXPECT_TRUE(has(read_file(state / "progress.json"), "\"prefill\": 3"))
      << read_file(state / "progress.json");
}

TEST(hints_cli, hint_with_a_bad_stage_or_another_mode_is_a_usage_error) {
  TempDir state;
  auto unknown = run(grader("--hint --stage nope", state));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(has(unknown.output, "unknown stage \"nope\"")) << unknown.output;
  auto with_all = run(grader("--hint --all", state));
  EXPECT_EQ(with_all.exit_code, 2) << with_all.output;
  EXPECT_TRUE(has(with_all.output, "--hint prints one stage's next hint")) << with_all.output;
}

TEST(hints_cli, an_autograders_results_never_mention_the_hints_opened) {
  TempDir state;
  run(grader("--hint --stage cache-structure", state));
  run(grader("--hint --stage cache-structure", state));
  for (const char* format : {"json", "gradescope", "exercism"}) {
    auto r = run(
        grader(std::string("--impl reference --stage cache-structure --format ") + format, state),
        false);
    EXPECT_EQ(r.exit_code, 0) << format << "\n" << r.output;
    EXPECT_FALSE(has(r.output, "hints")) << format << "\n" << r.output;
    EXPECT_FALSE(has(r.output, "Hint ")) << format << "\n" << r.output;
  }
}

// Under an identified mistake, the tier of its stage's hints that covers it (the catalogue
// names it): how to open it while it is closed, "already open" once it is, and never a
// word of hints in an autograder's results.
TEST(hints_cli, an_identified_mistake_offers_the_tier_that_covers_it) {
  TempDir state;
  const std::string grade =
      "--runner " + bin("runner-buggy-kv_swapped") + " --stage cache-structure --no-times";
  auto closed = run(grader(grade, state));
  EXPECT_EQ(closed.exit_code, 1) << closed.output;
  EXPECT_TRUE(has(closed.output, "[kvc.kv_swapped] keys and values swapped")) << closed.output;
  EXPECT_TRUE(has(closed.output,
                  "      hint 2 of 3 (the approach) covers this: `h` in watch mode, or "
                  "`build/bin/grader --hint --stage cache-structure`, opens the hints one tier "
                  "at a time\n"))
      << closed.output;

  run(grader("--hint --stage cache-structure", state));
  auto one_open = run(grader(grade, state));
  EXPECT_TRUE(has(one_open.output, "hint 2 of 3 (the approach) covers this: ")) << one_open.output;
  run(grader("--hint --stage cache-structure", state));
  auto open = run(grader(grade, state));
  EXPECT_EQ(open.exit_code, 1) << open.output;
  EXPECT_TRUE(has(open.output, "      hint 2 of 3 (the approach), already open, covers this\n"))
      << open.output;
  EXPECT_FALSE(has(open.output, "covers this: ")) << open.output;

  for (const char* format : {"gradescope", "exercism"}) {
    const auto file = state / (std::string(format) + ".json");
    auto r = run(grader(grade + " --format " + format + " --output " + file.string(), state));
    const std::string doc = read_file(file);
    EXPECT_TRUE(has(doc, "kv_swapped")) << format << ": " << doc;
    EXPECT_FALSE(has(doc, "hint")) << format << ": " << doc;
    EXPECT_FALSE(has(doc, "covers this")) << format << ": " << doc;
  }
}

// A mistake whose entry names no tier (no hint's text addresses it) is offered none.
TEST(hints_cli, a_mistake_no_hint_addresses_is_offered_none) {
  TempDir state;
  auto r = run(grader(
      "--runner " + bin("runner-buggy-double_append") + " --stage one-token --no-times", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "[dec.double_append]")) << r.output;
  EXPECT_FALSE(has(r.output, "covers this")) << r.output;
}
