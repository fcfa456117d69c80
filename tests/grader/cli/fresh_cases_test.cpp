// Hidden and fresh cases, as a user of the grader sees them: --hidden-fixtures grades the
// committed hidden set after the visible cases, marked hidden, inputs never shown;
// --random N --seed S grades N fresh cases per stage drawn by make-fixtures, with the seed
// reported and replayable; a known mistake fails a fresh case with a localization line;
// without make-fixtures --random is an environment error.
#include <gtest/gtest.h>

#include <filesystem>

#include "wire/json_bounded.hpp"
#include "test_support.hpp"

using testing_support::bin;
using testing_support::run;
using testing_support::source_dir;
using testing_support::TempDir;
using course::json;

namespace {

std::string grader(const std::string& args, const TempDir& state) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 KVCOURSE_NO_TIMES=1 " +
         bin("grader") + " " + args;
}

std::string hidden_dir() { return (source_dir() / "fixtures-hidden").string(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

json parse(const std::string& text) { return json::parse(text); }

}  // namespace

// One run grades every stage three ways: the reference passes its visible, hidden and
// fresh cases, in that order, and the results say where each case comes from.
TEST(fresh_cases, the_reference_passes_visible_hidden_and_fresh_cases_of_every_stage) {
  TempDir state;
  auto r = run(grader("--impl reference --all --hidden-fixtures " + hidden_dir() +
                          " --random 2 --seed 7 --format json -o " + (state / "r.json").string(),
                      state));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = parse(testing_support::read_file(state / "r.json"));
  EXPECT_EQ(doc["random"]["seed"], 7);
  EXPECT_EQ(doc["random"]["count"], 2);
  EXPECT_EQ(doc["random"]["replay"], "grader --random 2 --seed 7");
  const json manifest =
      parse(testing_support::read_file(testing_support::source_dir() / "stages" / "manifest.json"));
  ASSERT_EQ(doc["stages"].size(), manifest["stages"].size());
  for (const json& stage : doc["stages"]) {
    int hidden = 0, fresh = 0;
    std::string order;
    for (const json& c : stage["cases"]) {
      EXPECT_EQ(c["status"], "passed") << stage["slug"] << " " << c["name"];
      const std::string origin = c["origin"];
      if (order.empty() || order.back() != origin[0]) order += origin[0];
      hidden += origin == "hidden";
      if (origin == "random") {
        ++fresh;
        EXPECT_EQ(c["name"].get<std::string>().rfind("r7-", 0), 0u) << c["name"];
        EXPECT_EQ(c["replay"], "grader --random 2 --seed 7 --stage " + stage["slug"].get<std::string>() +
                                   " --case " + c["name"].get<std::string>());
      }
    }
    EXPECT_EQ(order, "vhr") << stage["slug"] << ": visible, then hidden, then random";
    EXPECT_GE(hidden, 1) << stage["slug"];
    EXPECT_EQ(fresh, 2) << stage["slug"];
  }
}

TEST(fresh_cases, the_text_report_marks_fresh_cases_and_prints_the_seed_and_replay) {
  TempDir state;
  auto r = run(grader("--impl reference --stage multi-layer-cache --random 2 --seed 7", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "PASS r7-01-appends (random)")) << r.output;
  EXPECT_TRUE(contains(r.output, "PASS r7-02-clone (random)")) << r.output;
  EXPECT_TRUE(contains(r.output, "Fresh cases: 2 per stage, seed 7 (replay: grader --random 2 --seed 7)")) << r.output;
  EXPECT_TRUE(contains(r.output, "All 10 cases pass.")) << r.output;
}

TEST(fresh_cases, without_a_seed_one_is_drawn_and_reported) {
  TempDir state;
  auto r = run(grader("--impl reference --stage cache-structure --random 1 --format json", state), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const json doc = parse(r.output);
  ASSERT_TRUE(doc["random"]["seed"].is_number_unsigned()) << r.output;
  const std::string seed = std::to_string(doc["random"]["seed"].get<uint64_t>());
  EXPECT_EQ(doc["random"]["replay"], "grader --random 1 --seed " + seed);
  EXPECT_EQ(doc["stages"][0]["cases"].back()["name"], "r" + seed + "-01-plan");
}

TEST(fresh_cases, a_known_mistake_fails_a_fresh_case_with_where_its_numbers_depart) {
  TempDir state;
  auto r = run(grader("--runner " + bin("runner-buggy-masked_decode") +
                          " --stage one-token --random 2 --seed 7 --case r7-02-decode",
                      state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "FAIL r7-02-decode (random)")) << r.output;
  EXPECT_TRUE(contains(r.output, "where: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "replay: grader --random 2 --seed 7 --stage one-token --case r7-02-decode")) << r.output;
  // No mistake answers are recorded for a fresh case: nothing is named from it alone.
  EXPECT_FALSE(contains(r.output, "Identified")) << r.output;
}

TEST(fresh_cases, without_make_fixtures_random_is_an_environment_error) {
  TempDir state, copy;
  std::filesystem::copy_file(bin("grader"), copy / "grader");
  auto r = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " " + (copy / "grader").string() +
               " --runner " + bin("runner-reference") + " --stage cache-structure --random 1 --seed 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--random needs make-fixtures")) << r.output;
  EXPECT_TRUE(contains(r.output, "the course authors' repository")) << r.output;
  EXPECT_TRUE(contains(r.output, "seed 3")) << r.output;
}

TEST(fresh_cases, bad_random_flags_are_usage_errors) {
  TempDir state;
  EXPECT_EQ(run(grader("--stage cache-structure --seed 3", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--stage cache-structure --random 0", state)).exit_code, 2);
  EXPECT_EQ(run(grader("--stage cache-structure --random two", state)).exit_code, 2);
  auto r = run(grader("--stage cache-structure --hidden-fixtures /nonexistent/hidden", state));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "/nonexistent/hidden")) << r.output;
}

// A known mistake on the hidden set: its hidden tests fail, are shown on Gradescope only
// once grades are published, never show their input, and are still diagnosed (the hidden
// set records the mistakes' answers).
TEST(fresh_cases, hidden_cases_are_graded_marked_and_their_inputs_never_shown) {
  TempDir state;
  const std::string args = "--runner " + bin("runner-buggy-kv_swapped") + " --stage cache-structure --hidden-fixtures " +
                           hidden_dir();
  auto r = run(grader(args + " --format gradescope -o " + (state / "g.json").string(), state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json g = parse(testing_support::read_file(state / "g.json"));
  int hidden = 0;
  for (const json& t : g["tests"]) {
    const std::string name = t["name"];
    const bool is_hidden = name.rfind("cache-structure: r", 0) == 0;
    EXPECT_EQ(t["visibility"], is_hidden ? "after_published" : "visible") << name;
    if (!is_hidden) continue;
    ++hidden;
    EXPECT_EQ(t["status"], "failed") << name;
    EXPECT_TRUE(contains(t["output"], "input:  not shown (a hidden case)")) << t["output"];
    EXPECT_FALSE(contains(t["output"], "\"plan\"")) << t["output"];
    EXPECT_TRUE(contains(t["output"], "kvc.kv_swapped")) << t["output"];
  }
  EXPECT_GE(hidden, 1);

  auto e = run(grader(args + " --format exercism -o " + (state / "e.json").string(), state));
  EXPECT_EQ(e.exit_code, 1) << e.output;
  const json x = parse(testing_support::read_file(state / "e.json"));
  hidden = 0;
  for (const json& t : x["tests"]) {
    if (t["name"].get<std::string>().rfind("cache-structure: r", 0) != 0) continue;
    ++hidden;
    EXPECT_EQ(t["test_code"], "checks: not shown (a hidden case)\ninput: not shown (a hidden case)");
    const std::string message = t.value("message", std::string());
    EXPECT_FALSE(contains(message, "A random plan")) << message;
    EXPECT_FALSE(contains(message, "\"plan\"")) << message;
  }
  EXPECT_GE(hidden, 1);

  // The text report: the hidden cases come after the visible ones (whose inputs it shows).
  auto text = run(grader(args, state));
  const size_t first_hidden = text.output.find("(hidden)");
  ASSERT_NE(first_hidden, std::string::npos) << text.output;
  const std::string hidden_part = text.output.substr(first_hidden);
  EXPECT_TRUE(contains(hidden_part, "input:  not shown (a hidden case)")) << hidden_part;
  EXPECT_FALSE(contains(hidden_part, "{\"plan\"")) << hidden_part;
}
