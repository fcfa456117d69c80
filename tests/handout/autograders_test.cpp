// The autograders as their platforms call them, on three submissions: the reference's
// files (pass), the skeleton's (fail), and code that does not compile (error). Exercism:
// autograders/exercism/run.sh SLUG INPUT_DIR OUTPUT_DIR and its results.json, version 3.
// Gradescope: run_autograder from the package, under a root that stands for /autograder,
// and its results.json. Both use the course that the fixture test built (autograder_setup.sh),
// which holds the hidden set (fixtures-hidden/): both grade it after the visible cases.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "handout/manifest.hpp"
#include "test_support.hpp"

#ifndef KVCOURSE_AUTOGRADER_DIR
#error "the build defines KVCOURSE_AUTOGRADER_DIR"
#endif

namespace fs = std::filesystem;
using nlohmann::json;
using testing_support::has;
using testing_support::read_file;
using testing_support::run;
using testing_support::sh_quoted;
using testing_support::source_dir;
using testing_support::TempDir;
using testing_support::write_file;

namespace {

const fs::path kAutograder = KVCOURSE_AUTOGRADER_DIR;
const fs::path kWork = kAutograder / "gradescope" / "kvcourse";

// A submission folder: each learner file from `from` ("reference" or the skeleton), at
// `prefix`/<its path>, or flat under `prefix` when `flat`.
void make_submission(const fs::path& dir, const std::string& from, const std::string& prefix = "",
                     bool flat = false) {
  for (const std::string& f : handout::learner_files()) {
    const fs::path origin = from == "reference"
                                ? source_dir() / "reference" / fs::path(f).filename()
                                : source_dir() / f;
    const fs::path target = dir / prefix / (flat ? fs::path(f).filename() : fs::path(f));
    fs::create_directories(target.parent_path());
    fs::copy_file(origin, target, fs::copy_options::overwrite_existing);
  }
}

void break_compilation(const fs::path& file) {
  write_file(file, read_file(file) + "\nint this_line_does_not_compile = ;\n");
}

int count_cases(const char* set) {
  int n = 0;
  for (const auto& stage : fs::directory_iterator(source_dir() / set))
    for (const auto& c : fs::directory_iterator(stage.path()))
      n += c.is_directory() || c.is_regular_file();
  return n;
}
int hidden_cases() { return count_cases("fixtures-hidden"); }
// A stage with timed cases (stage speed: judge/speed.hpp) adds one result after its cases,
// its speed verdict: a stage's folder in fixtures/ holding a case whose input says
// "timed": true.
int timed_stages() {
  int n = 0;
  for (const auto& stage : fs::directory_iterator(source_dir() / "fixtures")) {
    bool timed = false;
    for (const auto& c : fs::directory_iterator(stage.path())) {
      if (!c.is_regular_file() || c.path().extension() != ".json") continue;
      const json fx = json::parse(read_file(c.path()), nullptr, false);
      timed = timed || (fx.is_object() && fx.contains("input") && fx["input"].is_object() &&
                        fx["input"].value("timed", false));
    }
    n += timed;
  }
  return n;
}
int total_cases() { return count_cases("fixtures") + hidden_cases() + timed_stages(); }

// A hidden case's test: its case name is the generator's, "r<seed>-NN-<what>".
bool is_hidden(const json& test) {
  const std::string name = test["name"];
  const size_t colon = name.find(": ");
  return colon != std::string::npos && name.compare(colon + 2, 1, "r") == 0;
}

json exercism(const std::string& slug, const fs::path& input, const fs::path& output) {
  fs::create_directories(output);
  auto r = run("KVCOURSE_WORK=" + sh_quoted(kWork) + " bash " +
               sh_quoted(source_dir() / "autograders/exercism/run.sh") + " " + slug + " " +
               sh_quoted(input.string() + "/") + " " + sh_quoted(output.string() + "/"));
  EXPECT_EQ(r.exit_code, 0) << "exit 0 whenever results.json is written\n" << r.output;
  json j = json::parse(read_file(output / "results.json"), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << read_file(output / "results.json");
  return j;
}

json gradescope(const fs::path& root) {
  auto r =
      run("KVCOURSE_GRADESCOPE_ROOT=" + sh_quoted(root) + " KVCOURSE_WORK=" + sh_quoted(kWork) +
          " " + sh_quoted(kAutograder / "gradescope" / "source" / "run_autograder"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(read_file(root / "results" / "results.json"), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << read_file(root / "results" / "results.json");
  return j;
}

// Fields every Gradescope document and test must carry, with their types.
void expect_gradescope_shape(const json& j) {
  EXPECT_TRUE(j["score"].is_number()) << j;
  EXPECT_TRUE(j["execution_time"].is_number_integer()) << j;
  EXPECT_TRUE(j["output"].is_string()) << j;
  EXPECT_EQ(j["output_format"], "text");
  EXPECT_EQ(j["test_output_format"], "text");
  EXPECT_EQ(j["test_name_format"], "text");
  ASSERT_TRUE(j["tests"].is_array()) << j;
  for (const json& t : j["tests"]) {
    for (const char* key : {"name", "output", "status", "visibility", "output_format"})
      EXPECT_TRUE(t[key].is_string()) << key << " in " << t;
    EXPECT_TRUE(t["score"].is_number() && t["max_score"].is_number()) << t;
    EXPECT_TRUE(t["status"] == "passed" || t["status"] == "failed") << t;
    // Hidden cases: shown to the student once the grades are published, input never.
    EXPECT_EQ(t["visibility"], is_hidden(t) ? "after_published" : "visible") << t["name"];
    if (is_hidden(t) && t["status"] == "failed") {
      EXPECT_TRUE(has(t["output"], "input:  not shown (a hidden case)")) << t["output"];
    }
  }
}

// Exercism's tests of hidden cases: graded, nothing of the case shown but its name.
void expect_exercism_hidden(const json& j) {
  int hidden = 0;
  for (const json& t : j["tests"]) {
    if (!is_hidden(t)) continue;
    ++hidden;
    EXPECT_EQ(t["test_code"], "checks: not shown (a hidden case)\ninput: not shown (a hidden case)")
        << t;
    if (t.contains("message")) {
      EXPECT_TRUE(has(t["message"], "not shown (a hidden case)")) << t;
    }
  }
  EXPECT_EQ(hidden, hidden_cases());
}

}  // namespace

TEST(exercism_runner, the_reference_passes_every_test_in_order) {
  TempDir tmp;
  make_submission(tmp / "in", "reference");
  json j = exercism("kv-cache", tmp / "in", tmp / "out");
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["status"], "pass") << j.dump(1).substr(0, 2000);
  EXPECT_FALSE(j.contains("message") && !j["message"].is_null());
  ASSERT_EQ(int(j["tests"].size()), total_cases());
  expect_exercism_hidden(j);
  int task = 1;
  for (const json& t : j["tests"]) {
    EXPECT_EQ(t["status"], "pass") << t;
    EXPECT_TRUE(t["name"].is_string());
    EXPECT_TRUE(has(t["test_code"], "checks: ") && has(t["test_code"], "input: ")) << t;
    ASSERT_TRUE(t["task_id"].is_number_integer()) << t;
    EXPECT_GE(t["task_id"].get<int>(), task) << "tests in stage order";
    task = t["task_id"];
    if (t.contains("output")) {
      EXPECT_LE(t["output"].get<std::string>().size(), 500u);
    }
  }
  EXPECT_EQ(task, int(handout::manifest_stages().size())) << "the last stage is the last task";
}

TEST(exercism_runner, the_skeleton_fails_with_not_implemented_yet) {
  TempDir tmp;
  make_submission(tmp / "in", "skeleton");
  json j = exercism("kv-cache", tmp / "in", tmp / "out");
  EXPECT_EQ(j["status"], "fail");
  ASSERT_EQ(int(j["tests"].size()), total_cases());
  expect_exercism_hidden(j);
  for (const json& t : j["tests"]) {
    EXPECT_EQ(t["status"], "fail") << t;
    EXPECT_TRUE(has(t["message"], "not implemented yet")) << t;
  }
}

TEST(exercism_runner, a_stage_slug_grades_that_stage_only) {
  TempDir tmp;
  make_submission(tmp / "in", "reference");
  json j = exercism("prefill", tmp / "in", tmp / "out");
  EXPECT_EQ(j["status"], "pass");
  ASSERT_GT(j["tests"].size(), 0u);
  for (const json& t : j["tests"]) EXPECT_EQ(t["task_id"], 4) << t;
}

TEST(exercism_runner, code_that_does_not_compile_is_an_error_with_the_compiler_message) {
  TempDir tmp;
  make_submission(tmp / "in", "reference");
  break_compilation(tmp / "in" / "src/kvcache.cpp");
  json j = exercism("kv-cache", tmp / "in", tmp / "out");
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["status"], "error");
  EXPECT_TRUE(j["tests"].empty());
  const std::string message = j["message"];
  EXPECT_TRUE(has(message, "kvcache.cpp")) << message;
  EXPECT_TRUE(has(message, "error:")) << message;
  EXPECT_TRUE(has(message, "this_line_does_not_compile")) << message;
  EXPECT_TRUE(has(message, "src/kvcache.cpp:")) << "a path as the student knows it: " << message;
  EXPECT_FALSE(has(message, kWork.string())) << message;
}

TEST(gradescope_autograder, the_reference_scores_every_point) {
  TempDir root;
  make_submission(root / "submission", "reference", "my-kv-cache");  // zipped inside a folder
  json j = gradescope(root.path());
  expect_gradescope_shape(j);
  EXPECT_NEAR(j["score"].get<double>(), handout::total_points(), 1e-9) << j["output"];
  ASSERT_EQ(int(j["tests"].size()), total_cases());
  double sum = 0;
  for (const json& t : j["tests"]) {
    EXPECT_EQ(t["status"], "passed") << t;
    EXPECT_EQ(t["score"], t["max_score"]) << t;
    sum += t["max_score"].get<double>();
  }
  EXPECT_NEAR(sum, handout::total_points(), 1e-9) << "every stage's points in the manifest";
  EXPECT_TRUE(has(j["output"], "cases pass.")) << j["output"];
}

TEST(gradescope_autograder, the_skeleton_scores_zero) {
  TempDir root;
  make_submission(root / "submission", "skeleton", "", true);  // the three files, flat
  json j = gradescope(root.path());
  expect_gradescope_shape(j);
  EXPECT_EQ(j["score"], 0);
  ASSERT_EQ(int(j["tests"].size()), total_cases());
  for (const json& t : j["tests"]) {
    EXPECT_EQ(t["status"], "failed") << t;
    EXPECT_EQ(t["score"], 0) << t;
    EXPECT_TRUE(has(t["output"], "not implemented yet")) << t;
  }
}

TEST(gradescope_autograder, a_compile_error_is_one_failed_compiles_test) {
  TempDir root;
  make_submission(root / "submission", "reference");
  break_compilation(root / "submission" / "src/kvcache.cpp");
  json j = gradescope(root.path());
  expect_gradescope_shape(j);
  EXPECT_EQ(j["score"], 0);
  ASSERT_EQ(j["tests"].size(), 1u) << j;
  const json& t = j["tests"][0];
  EXPECT_EQ(t["name"], "compiles");
  EXPECT_EQ(t["status"], "failed");
  EXPECT_NEAR(t["max_score"].get<double>(), handout::total_points(), 1e-9);
  EXPECT_TRUE(has(t["output"], "this_line_does_not_compile")) << t;
  EXPECT_TRUE(has(t["output"], "error:")) << t;
}
