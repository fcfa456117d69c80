// A results file (--output) is a whole document in every path the grader can take: every
// stage already passed, --list, a broken course, a compile error. The grader as a command.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "handout/manifest.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using testing_support::has;
using testing_support::bin;
using testing_support::read_file;
using testing_support::run;
using testing_support::TempDir;
using testing_support::write_file;

namespace {

// The grader with its progress kept in `state`, every stage recorded as passed.
std::string grader_all_passed(const TempDir& state, const std::string& args) {
  nlohmann::json stages = nlohmann::json::object();
  for (const handout::ManifestStage& s : handout::manifest_stages()) stages[s.slug] = "passed";
  write_file(state / "progress.json", nlohmann::json{{"stages", stages}}.dump());
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " +
         bin("grader") + " " + args;
}

nlohmann::json parse(const fs::path& file) {
  const std::string text = read_file(file);
  EXPECT_FALSE(text.empty()) << file << " is empty";
  return nlohmann::json::parse(text, nullptr, false);
}

}  // namespace

// Every stage recorded as passed and no stage given: the text file says so; a platform's
// format grades every stage again (its document says what is true of all of them; here the
// skeleton's code fails them), never an empty file.
TEST(results_document, every_stage_passed_still_writes_each_format) {
  TempDir state;
  auto text = run(grader_all_passed(state, "-o " + (state / "r.txt").string()));
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(has(read_file(state / "r.txt"), "Every stage passes")) << read_file(state / "r.txt");
  for (const std::string format : {"json", "gradescope", "exercism"}) {
    const fs::path file = state / (format + ".json");
    auto r = run(grader_all_passed(state, "--format " + format + " -o " + file.string()));
    EXPECT_EQ(r.exit_code, 1) << format << ": " << r.output;
    nlohmann::json j = parse(file);
    ASSERT_FALSE(j.is_discarded()) << format << ": " << read_file(file);
    if (format == "json") {
      EXPECT_EQ(j["stages"].size(), handout::manifest_stages().size());
    } else if (format == "exercism") {
      EXPECT_EQ(j["status"], "fail");
      ASSERT_FALSE(j["tests"].empty()) << j;
      EXPECT_EQ(j["tests"].back()["task_id"], handout::manifest_stages().size())
          << "the last stage is graded too";
    } else {
      EXPECT_EQ(j["score"], 0);
      ASSERT_FALSE(j["tests"].empty()) << j;
      EXPECT_TRUE(has(j["tests"].back()["name"], handout::manifest_stages().back().slug + ": "))
          << j["tests"].back();
    }
  }
}

TEST(results_document, list_goes_to_the_output_file) {
  TempDir state;
  auto r = run(grader_all_passed(state, "--list -o " + (state / "list.txt").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string list = read_file(state / "list.txt");
  EXPECT_TRUE(has(list, "cache-structure")) << list;
  EXPECT_TRUE(has(list, handout::manifest_stages().back().slug)) << list;
}

// A course without a readable manifest: exit 2, and the platform's document says why.
TEST(results_document, a_broken_course_writes_an_error_document) {
  TempDir state;
  fs::create_directories(state / "course" / "stages");
  write_file(state / "course" / "stages" / "manifest.json", "{\"stages\": [");
  for (const char* format : {"exercism", "gradescope"}) {
    const fs::path file = state / (std::string(format) + ".json");
    auto r = run(
        "KVCOURSE_ROOT=" + (state / "course").string() + " " +
        grader_all_passed(state, "--all --format " + std::string(format) + " -o " + file.string()));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    nlohmann::json j = parse(file);
    ASSERT_FALSE(j.is_discarded()) << read_file(file);
    const std::string why = std::string(format) == "exercism" ? j["message"] : j["output"];
    EXPECT_TRUE(has(why, "manifest.json")) << j;
    if (std::string(format) == "exercism") {
      EXPECT_EQ(j["status"], "error");
    }
  }
}

// With --rebuild, code that does not compile: Gradescope gets one failed "compiles" test
// holding the compiler's message, Exercism an error with it.
TEST(results_document, a_compile_error_is_a_failed_compiles_test) {
  TempDir state;
  write_file(state / "build.sh",
             "echo \"src/kvcache.cpp:3:1: error: 'std::vector<float>' is bad\" >&2\nexit 1\n");
  const std::string rebuild =
      "--rebuild --rebuild-command 'sh " + (state / "build.sh").string() + "' --all ";
  auto g = run(
      grader_all_passed(state, rebuild + "--format gradescope -o " + (state / "g.json").string()));
  EXPECT_EQ(g.exit_code, 1) << g.output;
  nlohmann::json gj = parse(state / "g.json");
  ASSERT_EQ(gj["tests"].size(), 1u) << gj;
  EXPECT_EQ(gj["tests"][0]["name"], "compiles");
  EXPECT_EQ(gj["tests"][0]["status"], "failed");
  EXPECT_TRUE(has(gj["tests"][0]["output"], "'std::vector<float>' is bad")) << gj;
  EXPECT_EQ(gj["output_format"], "text");
  EXPECT_EQ(gj["score"], 0);

  auto e = run(
      grader_all_passed(state, rebuild + "--format exercism -o " + (state / "e.json").string()));
  EXPECT_EQ(e.exit_code, 1) << e.output;
  nlohmann::json ej = parse(state / "e.json");
  EXPECT_EQ(ej["version"], 3);
  EXPECT_EQ(ej["status"], "error");
  EXPECT_TRUE(has(ej["message"], "'std::vector<float>' is bad")) << ej;
}
