// The grader as a command: exit codes, messages, and what it does when the code under
// test crashes, hangs, exits, throws or prints.
#include <gtest/gtest.h>
#include <signal.h>

#include "wire/tensor.hpp"
#include "test_support.hpp"

using testing_support::bin;
using testing_support::run;
using testing_support::TempDir;

namespace {

// Progress goes to a temporary file so tests never touch the learner's own.
std::string grader(const std::string& args, const TempDir& state) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " + bin("grader") + " " + args;
}

std::string misbehaving(const std::string& mode, const std::string& extra, const TempDir& state) {
  return "KVCOURSE_MISBEHAVE=" + mode + " " +
         grader("--runner " + bin("runner-misbehaving") + " --stage cache-structure " + extra, state);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(grader_cli, lists_every_stage_in_order) {
  TempDir state;
  auto r = run(grader("--list", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  size_t at = 0;
  for (const char* slug : {"cache-structure", "multi-layer-cache", "one-token", "prefill", "prefix-reuse"}) {
    size_t found = r.output.find(slug, at);
    ASSERT_NE(found, std::string::npos) << slug << " in order in:\n" << r.output;
    at = found;
  }
}

TEST(grader_cli, unknown_stage_is_a_usage_error_listing_the_slugs) {
  TempDir state;
  auto r = run(grader("--stage cache-structur", state));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "unknown stage \"cache-structur\"")) << r.output;
  EXPECT_TRUE(contains(r.output, "cache-structure, multi-layer-cache")) << r.output;
}

TEST(grader_cli, bad_flags_are_usage_errors) {
  TempDir state;
  EXPECT_EQ(run(grader("--no-such-flag", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--impl teacher --stage cache-structure", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--all --stage cache-structure", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--stage cache-structure --timeout -1", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--help", state)).exit_code, 0);
}

TEST(grader_cli, missing_runner_is_an_environment_error) {
  TempDir state;
  auto r = run(grader("--runner /nonexistent/runner --stage cache-structure", state));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "/nonexistent/runner is missing or not executable")) << r.output;
}

TEST(grader_cli, reference_passes_with_exit_0) {
  TempDir state;
  auto r = run(grader("--impl reference --stage multi-layer-cache", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "All 8 cases pass.")) << r.output;
}

TEST(grader_cli, skeleton_fails_with_not_implemented_and_exit_1) {
  TempDir state;
  auto r = run(grader("--stage cache-structure", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "not implemented yet: run_cache_plan (adapters/adapters.cpp)")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 of 10 cases pass.")) << r.output;
}

TEST(grader_cli, broken_fixture_is_an_environment_error_naming_the_file) {
  TempDir state, fixtures;
  std::filesystem::copy(testing_support::source_dir() / "fixtures", fixtures.path(),
                        std::filesystem::copy_options::recursive);
  auto victim = fixtures / "cache-structure/03-three-appends.json";
  std::string text = testing_support::read_file(victim);
  testing_support::write_file(victim, text.substr(0, text.size() / 2));
  auto r = run(grader("--impl reference --stage cache-structure --fixtures " + fixtures.path().string(), state));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, victim.string() + ": is not valid JSON")) << r.output;
}

TEST(grader_cli, a_crash_fails_one_case_and_the_others_still_run) {
  TempDir state;
  auto r = run(misbehaving("segfault", "", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "FAIL 02-one-append")) << r.output;
  EXPECT_TRUE(contains(r.output, "was killed by signal 11")) << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
}

TEST(grader_cli, abort_exit_and_exceptions_are_named) {
  TempDir state;
  auto r = run(misbehaving("abort", "", state));
  EXPECT_TRUE(contains(r.output, "was killed by signal 6")) << r.output;
  r = run(misbehaving("exit", "", state));
  EXPECT_TRUE(contains(r.output, "exited with status 0 before answering")) << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
  r = run(misbehaving("throw", "", state));
  EXPECT_TRUE(contains(r.output, "threw std::out_of_range: position 7 is past the end")) << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
  r = run(misbehaving("garbage", "", state));
  EXPECT_TRUE(contains(r.output, "cut off or malformed")) << r.output;
  EXPECT_EQ(r.exit_code, 1);
}

TEST(grader_cli, a_hang_times_out_and_leaves_no_process_behind) {
  TempDir state;
  auto pidfile = state / "runner.pid";
  auto r = run("KVCOURSE_MISBEHAVE_PIDFILE=" + pidfile.string() + " " + misbehaving("hang", "--timeout 0.5", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no answer within 0.5 s")) << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
  int pid = std::stoi(testing_support::read_file(pidfile));
  EXPECT_NE(::kill(pid, 0), 0) << "runner " << pid << " is still alive";
}

TEST(grader_cli, learner_output_is_shown_labelled_and_never_parsed) {
  TempDir state;
  auto r = run(misbehaving("print", "", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[runner] hello from the learner")) << r.output;
  EXPECT_TRUE(contains(r.output, "[runner] debug: plan has 2 steps")) << r.output;
  r = run(misbehaving("flood", "", state));
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 2000);
  EXPECT_TRUE(contains(r.output, "more output was cut")) << r.output.substr(0, 2000);
}

TEST(grader_cli, json_results_carry_status_and_messages) {
  TempDir state;
  auto r = run(misbehaving("throw", "--format json", state), false);
  EXPECT_EQ(r.exit_code, 1);
  course::json j = course::json::parse(r.output);
  EXPECT_EQ(j["passed"], false);
  const auto& cases = j["stages"][0]["cases"];
  ASSERT_EQ(cases.size(), 10u);
  EXPECT_EQ(cases[1]["status"], "exception");
  EXPECT_EQ(cases[0]["status"], "passed");
}

TEST(grader_cli, json_results_survive_output_that_is_not_utf8) {
  TempDir state;
  auto r = run(misbehaving("print", "--format json", state), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  course::json j = course::json::parse(r.output);
  EXPECT_NE(j["stages"][0]["cases"][1]["output"].get<std::string>().find("hello from the learner"), std::string::npos);
}

TEST(grader_cli, case_without_stage_finds_the_stage_that_has_it) {
  TempDir state;
  auto r = run(grader("--impl reference --case 09-clone-an-older-cache", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Stage 1 · cache-structure")) << r.output;
  EXPECT_TRUE(contains(r.output, "PASS 09-clone-an-older-cache")) << r.output;
  EXPECT_TRUE(contains(r.output, "All 1 cases pass.")) << r.output;
}

TEST(grader_cli, an_unknown_case_lists_the_valid_ones) {
  TempDir state;
  auto r = run(grader("--impl reference --case no-such-case", state));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no stage has a case named \"no-such-case\"")) << r.output;
  EXPECT_TRUE(contains(r.output, "cache-structure: 01-empty, 02-one-append")) << r.output;
  EXPECT_TRUE(contains(r.output, "prefix-reuse: 01-one-suffix-6-reused")) << r.output;
  r = run(grader("--impl reference --stage multi-layer-cache --case 01-empty", state));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "stage multi-layer-cache has no case named \"01-empty\". Its cases: 01-no-appends, "))
      << r.output;
}

TEST(grader_cli, no_times_leaves_out_every_duration) {
  TempDir state;
  for (const std::string& how : {std::string("--no-times"), std::string("")}) {
    const std::string env = how.empty() ? "KVCOURSE_NO_TIMES=1 " : "";
    auto r = run(env + grader("--impl reference --stage multi-layer-cache " + how, state));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "  PASS 01-no-appends\n")) << r.output;
    EXPECT_TRUE(contains(r.output, "All 8 cases pass.\n")) << r.output;
    EXPECT_FALSE(contains(r.output, "s)")) << r.output;
  }
  auto timed = run(grader("--impl reference --stage multi-layer-cache", state));
  EXPECT_TRUE(contains(timed.output, "All 8 cases pass. (")) << timed.output;
}
