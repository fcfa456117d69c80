// The grader as a command: exit codes, messages, and what it does when the code under
// test crashes, hangs, exits, throws or prints.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

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
  const course::json manifest =
      course::json::parse(testing_support::read_file(testing_support::source_dir() / "stages" / "manifest.json"));
  size_t column = std::string::npos;
  for (const course::json& stage : manifest["stages"]) {
    const std::string slug = stage["slug"];
    size_t found = r.output.find(slug, at);
    ASSERT_NE(found, std::string::npos) << slug << " in order in:\n" << r.output;
    // Every slug in one column, stage 11's as stage 1's.
    const size_t line_start = r.output.rfind('\n', found);
    const size_t col = found - (line_start == std::string::npos ? 0 : line_start + 1);
    if (column == std::string::npos) column = col;
    EXPECT_EQ(col, column) << slug << " in:\n" << r.output;
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
  // Located where it was thrown, as a crash is where it stopped.
  EXPECT_TRUE(contains(
      r.output,
      "threw std::out_of_range in run_cache_plan (tests/buggy/misbehaving_adapters.cpp:49): "
      "position 7 is past the end"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
  r = run(misbehaving("garbage", "", state));
  EXPECT_TRUE(contains(r.output, "cut off or malformed")) << r.output;
  EXPECT_EQ(r.exit_code, 1);
}

TEST(grader_cli, a_hang_times_out_and_leaves_no_process_behind) {
  TempDir state;
  const std::string mark = "KVCOURSE_TEST_MARK=" + testing_support::unique_token();
  auto r = run(mark + " " + misbehaving("hang", "--timeout 0.5", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The hang is a spin: the runner's CPU budget (--timeout) stops it, not the wall clock.
  EXPECT_TRUE(contains(r.output, "CPU-s of the 0.5 allowed (set by --timeout): an endless loop?"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
  EXPECT_EQ(testing_support::processes_with_environment(mark), std::vector<int>{}) << "a runner is still alive";
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

// ---- Malformed course inputs and answers: exit 2 naming the file, or a failed case
// naming the cause; never a crash, a hang or a raw library message.

namespace {

// A copy of one stage's committed fixtures in a temporary fixtures folder.
struct StageCopy {
  TempDir root;
  std::string slug;
  explicit StageCopy(const std::string& stage) : slug(stage) {
    std::filesystem::copy(testing_support::source_dir() / "fixtures" / slug, root / slug,
                          std::filesystem::copy_options::recursive);
  }
  std::filesystem::path file(const std::string& name) const { return root / slug / name; }
  course::json read(const std::string& name) const { return course::json::parse(testing_support::read_file(file(name))); }
  void write(const std::string& name, const std::string& text) const { testing_support::write_file(file(name), text); }
};

// Grades the copy with the reference: the result when the copy is broken.
testing_support::CommandResult grade_copy(const StageCopy& copy, const TempDir& state) {
  return run(grader("--impl reference --stage " + copy.slug + " --fixtures " + copy.root.path().string(), state));
}

void expect_broken_course(const StageCopy& copy, const std::string& file, const std::string& words) {
  TempDir state;
  auto r = grade_copy(copy, state);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "the course is broken: " + copy.file(file).string() + ": ")) << r.output;
  EXPECT_TRUE(contains(r.output, words)) << r.output;
  EXPECT_FALSE(contains(r.output, "[json.exception")) << r.output;
  EXPECT_FALSE(contains(r.output, "PASS")) << "nothing is graded: " << r.output;
}

// The sample's text with `field` replaced by raw JSON text (which may be invalid).
std::string with_field(course::json j, const std::string& field, const std::string& value_text) {
  j[field] = "@@";
  std::string text = j.dump();
  return text.replace(text.find("\"@@\""), 4, value_text);
}

}  // namespace

TEST(grader_cli, a_fixture_nested_100000_deep_is_a_broken_course) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "02-lesson-example.json";
  copy.write(name, with_field(copy.read(name), "expected", std::string(100000, '[') + std::string(100000, ']')));
  expect_broken_course(copy, name, "is nested deeper than 64 levels");
}

TEST(grader_cli, a_gzip_bomb_is_a_broken_course) {
  StageCopy copy("multi-layer-cache");
  // 80 MB of spaces after the fixture's text: valid JSON, 80 KB on disk.
  std::filesystem::remove(copy.file("03-every-layer-once.json"));
  const auto bomb = copy.file("03-every-layer-once.json.gz");
  auto r = run("{ cat " + copy.file("02-lesson-example.json").string() + "; head -c 80000000 /dev/zero | tr '\\0' ' '; } | gzip -9 > " +
               bomb.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_broken_course(copy, "03-every-layer-once.json.gz", "inflates to more than 67108864 bytes");
}

TEST(grader_cli, a_number_beyond_double_is_a_broken_course) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "04-one-layer-many.json";
  copy.write(name, with_field(copy.read(name), "extra", "1e400"));
  expect_broken_course(copy, name, "holds a number too large for a double");
}

TEST(grader_cli, a_wrong_typed_field_is_a_broken_course) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "05-uneven.json";
  copy.write(name, with_field(copy.read(name), "checks", "{\"a\": 1}"));
  expect_broken_course(copy, name, "\"checks\" must be a string");
}

TEST(grader_cli, format_version_out_of_range_is_a_broken_course) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "01-no-appends.json";
  copy.write(name, with_field(copy.read(name), "format_version", "4294967297"));
  expect_broken_course(copy, name, "has format_version 4294967297 but this grader reads version 1");
}

TEST(grader_cli, an_element_count_overflow_is_a_broken_course) {
  StageCopy copy("cache-structure");
  const std::string name = "02-one-append.json";
  course::json j = copy.read(name);
  j["expected"]["caches"][0]["keys"] = {{"shape", {uint64_t(1) << 32, uint64_t(1) << 32}}, {"dtype", "float32"}, {"data", course::json::array()}};
  copy.write(name, j.dump());
  expect_broken_course(copy, name, "expected.caches[0].keys: tensor shape [4294967296, 4294967296] holds more than");
}

TEST(grader_cli, an_unknown_adapter_is_a_broken_course_not_a_failed_case) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "06-clone-then-diverge.json";
  course::json j = copy.read(name);
  j["adapter"] = "run_model_cache_klone";
  copy.write(name, j.dump());
  expect_broken_course(copy, name, "adapter \"run_model_cache_klone\" is not one the runners serve");
}

TEST(grader_cli, a_malformed_input_is_a_broken_course_not_a_failed_case) {
  StageCopy copy("multi-layer-cache");
  const std::string name = "05-uneven.json";
  course::json j = copy.read(name);
  j["input"]["appends"] = {0, 4294967297};  // an int would read layer 1
  copy.write(name, j.dump());
  expect_broken_course(copy, name, "input.appends[1]: must be a whole number from 0 to 11, not 4294967297");
}

TEST(grader_cli, a_fifo_or_a_directory_named_json_is_a_broken_course_and_nothing_blocks) {
  StageCopy copy("multi-layer-cache");
  ASSERT_EQ(::mkfifo(copy.file("09-pipe.json").c_str(), 0600), 0);
  expect_broken_course(copy, "09-pipe.json", "is a FIFO (named pipe), not a fixture file");
  std::filesystem::remove(copy.file("09-pipe.json"));
  std::filesystem::create_directory(copy.file("09-folder.json"));
  expect_broken_course(copy, "09-folder.json", "is a directory, not a fixture file");
}

namespace {

std::string hostile_answer(const std::string& mode, const std::string& extra, const TempDir& state) {
  return "KVCOURSE_ANSWER=" + mode + " " +
         grader("--runner " + bin("answer-runner") + " --stage multi-layer-cache " + extra, state);
}

}  // namespace

TEST(grader_cli, hostile_answers_fail_their_case_with_the_cause) {
  TempDir state;
  const std::pair<const char*, const char*> modes[] = {
      {"deep", "the runner's answer: is nested deeper than 64 levels"},
      {"huge_number", "the runner's answer: holds a number too large for a double"},
      {"bad_status", "the runner's answer: has no string \"status\""},
      {"bad_what", "the runner's answer: has a \"what\" or \"type\" that is not a string"},
      // Found by fuzz_answer: a detector of this stage threw on it, and the grader exited 2.
      {"list_output", "FAIL 01-no-appends"},
  };
  for (const auto& [mode, words] : modes) {
    auto r = run(hostile_answer(mode, "", state));
    EXPECT_EQ(r.exit_code, 1) << mode << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, words)) << mode << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, "0 of 8 cases pass.")) << mode << ":\n" << r.output;
  }
  auto listed = run(hostile_answer("list_output", "--case 01-no-appends", state));
  EXPECT_TRUE(contains(listed.output, "\n         expected an object, got [1]\n")) << listed.output;
  auto r = run(hostile_answer("deep", "--format json", state), false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NO_THROW(course::json::parse(r.output)) << r.output.substr(0, 2000);
}

TEST(grader_cli, an_answer_beyond_float32_is_a_named_mismatch) {
  TempDir state;
  auto r = run("KVCOURSE_ANSWER=big_float " +
               grader("--runner " + bin("answer-runner") + " --stage cache-structure --case 01-empty", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "outside float32's range")) << r.output;
}

TEST(grader_cli, terminal_escapes_in_the_learners_output_are_shown_escaped) {
  TempDir state;
  auto r = run(hostile_answer("escapes", "--case 01-no-appends", state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_EQ(r.output.find('\x07'), std::string::npos) << "a raw BEL reached the terminal";
  EXPECT_TRUE(contains(r.output, "[runner] \\x1b[2J\\x1b]0;owned\\x07plain text")) << r.output;
  EXPECT_TRUE(contains(r.output, "threw std::runtime_error: \\x1b[31mred\\x1b[0m")) << r.output;
}

TEST(grader_cli, an_unwritable_progress_file_warns_once_and_grading_goes_on) {
  TempDir state;
  testing_support::write_file(state / "not-a-folder", "a file");
  const std::string progress = (state / "not-a-folder" / "progress.json").string();
  auto r = run("KVCOURSE_PROGRESS=" + progress + " NO_COLOR=1 " + bin("grader") + " --stage multi-layer-cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "0 of 8 cases pass.")) << r.output;
  size_t warnings = 0;
  for (size_t at = 0; (at = r.output.find("cannot write the progress file", at)) != std::string::npos; ++at) ++warnings;
  EXPECT_EQ(warnings, 1u) << r.output;
  EXPECT_TRUE(contains(r.output, "grader: warning: cannot write the progress file " + progress)) << r.output;
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

// A plain `grader` never grades code older than the learner's files: a runner older than
// a file in the watched folders is rebuilt first; --no-rebuild refuses to grade it. Here
// the "runner" starts as the skeleton and its rebuild command puts the reference in its
// place, so the verdict tells which one was graded.
TEST(grader_cli, a_runner_older_than_a_learner_file_is_rebuilt_before_grading) {
  namespace fs = std::filesystem;
  TempDir state, dir;
  fs::create_directories(dir / "src");
  const fs::path runner = dir / "runner";
  fs::copy_file(bin("runner-learner"), runner);
  testing_support::write_file(dir / "src" / "kvcache.cpp", "// just edited\n");
  fs::last_write_time(runner,
                      fs::last_write_time(dir / "src" / "kvcache.cpp") - std::chrono::seconds(60));
  const std::string common = "--runner " + runner.string() + " --watch-dir " +
                             (dir / "src").string() + " --stage cache-structure --rebuild-command ";
  const std::string rebuild = "'cp " + bin("runner-reference") + " " + runner.string() + "'";

  auto r = run(grader(common + rebuild + " --no-rebuild", state));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "is older than " + (dir / "src" / "kvcache.cpp").string()))
      << r.output;
  EXPECT_TRUE(contains(r.output, "it would grade the code as it was before that change"))
      << r.output;

  r = run(grader(common + rebuild, state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "changed since the runner was built: rebuilding it")) << r.output;
  EXPECT_TRUE(contains(r.output, "All 10 cases pass.")) << r.output;

  // Now the runner is the newer: no rebuild (this command would fail the run).
  r = run(grader(common + "false", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "rebuilding")) << r.output;
}

// The decode stages' weights file (build/weights) is the course's: one that is not those
// weights stops the grading (exit 2) naming it, never a learner's failed case.
TEST(grader_cli, a_broken_weights_file_stops_the_grading_naming_it) {
  TempDir state, build;
  std::filesystem::create_directories(build / "weights");
  const std::filesystem::path file = build / "weights" / "gpt2-small-2026.weights";
  testing_support::write_file(file, std::string(8192, 'x'));
  auto r = run(
      grader("--impl reference --stage one-token --no-rebuild --build-dir " + build.path().string(),
             state));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(
      r.output, "the weights file " + file.string() + " is broken (not a synthetic weights file of this format)"))
      << r.output;
  // A stage without weights does not read it.
  r = run(grader(
      "--impl reference --stage cache-structure --no-rebuild --build-dir " + build.path().string(),
      state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}
