// The autograder formats: Gradescope's results.json and the Exercism test runner
// interface (version 3), from hand-made results.
#include "cli/formats.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using testing_support::has;

using namespace course;

namespace {

CaseResult make_case(const std::string& name, CaseStatus status, const std::string& message = "",
                     const std::string& output = "") {
  CaseResult c;
  c.name = name;
  c.checks = "What " + name + " checks.";
  c.input_summary = "{\"appends\": [0]}";
  c.status = status;
  c.message = message;
  c.output = output;
  return c;
}

// Stage 1: a pass, a failure with a diagnosis and printed output, a crash.
std::vector<StageResult> mixed_results() {
  StageResult r;
  r.stage = find_stage("cache-structure");
  r.cases.push_back(make_case("01-empty", CaseStatus::passed));
  CaseResult failed = make_case("02-one-append", CaseStatus::failed,
                                "keys: 768 of 768 elements differ", "debug line\n");
  failed.diagnoses.push_back(
      {"kvc.kv_swapped", "", "K and V swapped", "keys hold the values", "stages/01/lesson.md#kv"});
  r.cases.push_back(failed);
  r.cases.push_back(
      make_case("03-crash", CaseStatus::crashed, "the code under test was killed by signal 11"));
  return {r};
}

std::vector<StageResult> passing_results() {
  StageResult r;
  r.stage = find_stage("multi-layer-cache");
  r.cases.push_back(make_case("01-no-appends", CaseStatus::passed));
  r.cases.push_back(make_case("02-lesson-example", CaseStatus::passed, "", "hello\n"));
  return {r};
}

}  // namespace

// cache-structure is worth 10 points (stages/manifest.json): 10/3 for each of 3 cases.
TEST(formats, gradescope_shares_the_stage_points_among_its_cases) {
  const double each = find_stage("cache-structure")->points / 3;
  json j = gradescope_results(mixed_results(), 2.2);
  EXPECT_DOUBLE_EQ(j["score"].get<double>(), each);
  EXPECT_EQ(j["execution_time"], 3);  // whole seconds, rounded up
  ASSERT_EQ(j["tests"].size(), 3u);
  for (const json& t : j["tests"]) {
    EXPECT_DOUBLE_EQ(t["max_score"].get<double>(), each);
    EXPECT_EQ(t["visibility"], "visible");
    EXPECT_EQ(t["output_format"], "text");
  }
  EXPECT_EQ(j["tests"][0]["name"], "cache-structure: 01-empty");
  EXPECT_EQ(j["tests"][0]["status"], "passed");
  EXPECT_DOUBLE_EQ(j["tests"][0]["score"].get<double>(), each);
  EXPECT_EQ(j["tests"][1]["status"], "failed");
  EXPECT_EQ(j["tests"][1]["score"], 0);
  EXPECT_EQ(j["tests"][2]["status"], "failed");
  EXPECT_TRUE(has(j["output"], "1 of 3 cases pass."));
}

// Gradescope's default "simple_format" reads text as HTML: `std::vector<float>` loses
// its `<float>`. Every text field says it is plain text.
// A stage whose every case passes adds exactly its points, whatever its number of cases
// (10 points over 11 cases: adding 10/11 eleven times gives 9.999999999999998).
TEST(formats, gradescope_full_marks_are_exact) {
  StageResult r;
  r.stage = find_stage("cache-structure");
  for (int i = 0; i < 11; ++i) r.cases.push_back(make_case("case-" + std::to_string(i), CaseStatus::passed));
  const json j = gradescope_results({r}, 0);
  EXPECT_EQ(j["score"].get<double>(), r.stage->points);
}

TEST(formats, gradescope_text_is_declared_plain_text) {
  for (const json& j : {gradescope_results(mixed_results(), 0), gradescope_error("x", 0),
                        gradescope_compile_error("x", 0)}) {
    EXPECT_EQ(j["output_format"], "text") << j;
    EXPECT_EQ(j["test_output_format"], "text") << j;
    EXPECT_EQ(j["test_name_format"], "text") << j;
    EXPECT_TRUE(j.contains("execution_time")) << j;
  }
}

TEST(formats, gradescope_compile_error_is_one_failed_test_worth_every_stage) {
  const std::string message = "src/kvcache.cpp:3:1: error: 'std::vector<float>' has no member 'x'";
  json j = gradescope_compile_error(message, 4);
  double total = 0;
  for (const Stage& s : stage_table()) total += s.points;
  EXPECT_EQ(j["score"], 0);
  ASSERT_EQ(j["tests"].size(), 1u);
  const json& t = j["tests"][0];
  EXPECT_EQ(t["name"], "compiles");
  EXPECT_EQ(t["status"], "failed");
  EXPECT_EQ(t["score"], 0);
  EXPECT_DOUBLE_EQ(t["max_score"].get<double>(), total);
  EXPECT_TRUE(has(t["output"], message)) << t;
  EXPECT_EQ(t["output_format"], "text");
}

TEST(formats, gradescope_output_explains_the_failure) {
  json j = gradescope_results(mixed_results(), 0);
  std::string out = j["tests"][1]["output"];
  EXPECT_TRUE(has(out, "keys: 768 of 768 elements differ")) << out;
  EXPECT_TRUE(has(out, "[kvc.kv_swapped] K and V swapped")) << out;
  EXPECT_TRUE(has(out, "stages/01/lesson.md#kv")) << out;
  EXPECT_TRUE(has(out, "[your code] debug line")) << out;  // labelled, as in the terminal
  EXPECT_FALSE(has(out, "\033[")) << "no colour in a results file";
  EXPECT_TRUE(has(j["tests"][2]["output"].get<std::string>(), "killed by signal 11"));
}

TEST(formats, gradescope_error_scores_zero_with_the_reason) {
  json j = gradescope_error("runner /x is missing", 1);
  EXPECT_EQ(j["score"], 0);
  EXPECT_TRUE(j["tests"].empty());
  EXPECT_TRUE(has(j["output"], "runner /x is missing"));
}

TEST(formats, exercism_version_3_statuses) {
  json j = exercism_results(mixed_results());
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["status"], "fail");
  EXPECT_FALSE(j.contains("message")) << "a top-level message is only for status error";
  ASSERT_EQ(j["tests"].size(), 3u);
  EXPECT_EQ(j["tests"][0]["status"], "pass");
  EXPECT_FALSE(j["tests"][0].contains("message"));
  EXPECT_EQ(j["tests"][1]["status"], "fail");
  EXPECT_EQ(j["tests"][2]["status"], "error");  // a crash is an error, not a wrong answer
  std::string message = j["tests"][1]["message"];
  EXPECT_TRUE(has(message, "keys: 768 of 768 elements differ")) << message;
  EXPECT_TRUE(has(message, "kvc.kv_swapped")) << message;
  EXPECT_EQ(j["tests"][1]["output"], "debug line\n");  // the learner's output, as printed
}

// Version 3: each test names its task (the stage's number) and shows what it runs.
TEST(formats, exercism_tests_carry_task_id_and_test_code) {
  auto results = mixed_results();
  for (auto& r : passing_results()) results.push_back(r);
  json j = exercism_results(results);
  ASSERT_EQ(j["tests"].size(), 5u);
  EXPECT_EQ(j["tests"][0]["task_id"], 1);
  EXPECT_EQ(j["tests"][2]["task_id"], 1);
  EXPECT_EQ(j["tests"][3]["task_id"], 2);
  for (const json& t : j["tests"]) {
    std::string code = t["test_code"];
    EXPECT_TRUE(has(code, "checks: What ")) << code;
    EXPECT_TRUE(has(code, "input: {\"appends\": [0]}")) << code;
  }
}

TEST(formats, exercism_pass_when_every_case_passes) {
  json j = exercism_results(passing_results());
  EXPECT_EQ(j["status"], "pass");
  EXPECT_EQ(j["tests"][1]["name"], "multi-layer-cache: 02-lesson-example");
  EXPECT_EQ(j["tests"][1]["output"], "hello\n");
}

TEST(formats, exercism_output_is_cut_at_500_characters) {
  auto results = passing_results();
  results[0].cases[0].output = std::string(2000, 'x');
  json j = exercism_results(results);
  std::string out = j["tests"][0]["output"];
  EXPECT_LE(out.size(), 500u);
  EXPECT_TRUE(has(out, "Output was truncated. Please limit to 500 chars")) << out;
  EXPECT_EQ(out.substr(0, 10), "xxxxxxxxxx");
  results[0].cases[0].output = std::string(500, 'y');  // exactly the limit: kept whole
  EXPECT_EQ(exercism_results(results)["tests"][0]["output"], std::string(500, 'y'));
}

TEST(formats, exercism_error_has_a_message_and_no_tests) {
  json j = exercism_error("src/kvcache.cpp:3:1: error: expected ';'");
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["message"], "src/kvcache.cpp:3:1: error: expected ';'");
  EXPECT_TRUE(j["tests"].empty());
}

TEST(formats, several_stages_in_one_document) {
  auto results = mixed_results();
  for (auto& r : passing_results()) results.push_back(r);
  EXPECT_EQ(gradescope_results(results, 0)["tests"].size(), 5u);
  EXPECT_DOUBLE_EQ(
      gradescope_results(results, 0)["score"].get<double>(),
      find_stage("cache-structure")->points / 3 + find_stage("multi-layer-cache")->points);
  EXPECT_EQ(exercism_results(results)["tests"].size(), 5u);
  EXPECT_EQ(exercism_results(results)["tests"][3]["name"], "multi-layer-cache: 01-no-appends");
}

// A hidden case (grader --hidden-fixtures): Gradescope shows its test once the grades are
// published; Exercism grades it but shows neither what it checks (the sentence may quote
// the drawn input) nor its input. A random case's test_code says how to replay it.
TEST(formats, hidden_and_random_cases_show_what_their_platform_allows) {
  StageResult r;
  r.stage = find_stage("cache-structure");
  r.cases.push_back(make_case("01-empty", CaseStatus::passed));
  CaseResult hidden = make_case("r2026-01-plan", CaseStatus::failed, "keys: 5 of 768 elements differ");
  hidden.origin = CaseOrigin::hidden;
  hidden.checks = "A random plan of 1 create, 3 appends and 0 clones.";
  hidden.input_summary = kHiddenInput;
  r.cases.push_back(hidden);
  CaseResult fresh = make_case("r7-01-plan", CaseStatus::passed);
  fresh.origin = CaseOrigin::random;
  fresh.replay = "grader --random 1 --seed 7 --stage cache-structure --case r7-01-plan";
  r.cases.push_back(fresh);

  const json g = gradescope_results({r}, 1);
  ASSERT_EQ(g["tests"].size(), 3u);
  EXPECT_EQ(g["tests"][0]["visibility"], "visible");
  EXPECT_EQ(g["tests"][1]["visibility"], "after_published");
  EXPECT_EQ(g["tests"][2]["visibility"], "visible");
  EXPECT_TRUE(has(g["tests"][1]["output"], "input:  not shown (a hidden case)")) << g["tests"][1]["output"];

  const json e = exercism_results({r});
  ASSERT_EQ(e["tests"].size(), 3u);
  EXPECT_EQ(e["tests"][1]["test_code"], "checks: not shown (a hidden case)\ninput: not shown (a hidden case)");
  EXPECT_FALSE(has(e["tests"][1]["message"], "A random plan")) << e["tests"][1]["message"];
  EXPECT_TRUE(has(e["tests"][1]["message"], "keys: 5 of 768 elements differ")) << e["tests"][1]["message"];
  EXPECT_EQ(e["tests"][2]["test_code"],
            "checks: What r7-01-plan checks.\ninput: {\"appends\": [0]}\n"
            "replay: grader --random 1 --seed 7 --stage cache-structure --case r7-01-plan");
}

TEST(formats, gradescope_leaderboard_carries_the_speed_stage_figures) {
  StageResult r;
  r.stage = find_stage("speed");
  CaseResult verdict = make_case("speed", CaseStatus::passed);
  verdict.note = "11.5 tokens per CPU-second; ...";
  r.cases.push_back(verdict);
  EXPECT_FALSE(gradescope_results({r}, 1).contains("leaderboard"));  // not measured
  SpeedSummary s;
  s.measured = true;
  s.tokens_per_s = 11.46;
  s.ratio = 0.683;
  s.bandwidth_fraction = 0.557;
  r.speed = s;
  const json j = gradescope_results({r}, 1);
  ASSERT_TRUE(j.contains("leaderboard")) << j.dump(2);
  const json& board = j["leaderboard"];
  ASSERT_EQ(board.size(), 3u);
  EXPECT_EQ(board[0]["name"], "Tokens per CPU-second");
  EXPECT_DOUBLE_EQ(board[0]["value"].get<double>(), 11.5);
  EXPECT_DOUBLE_EQ(board[1]["value"].get<double>(), 0.68);
  EXPECT_DOUBLE_EQ(board[2]["value"].get<double>(), 0.56);
  // A passed case's note is in its test's output.
  EXPECT_NE(j["tests"][0]["output"].get<std::string>().find("11.5 tokens per CPU-second"),
            std::string::npos);
}
