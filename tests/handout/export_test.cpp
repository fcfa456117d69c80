// The learner's repository (scripts/export-learner.sh), built and graded as a student
// would: in a clean folder, with no reference/ and no tests/. The skeleton fails every
// stage with "not implemented yet"; the reference's files dropped into src/ and adapters/
// pass every stage. Slow (a whole build): CTest label "slow".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "handout/manifest.hpp"
#include "test_support.hpp"

#ifndef KVCOURSE_CMAKE
#error "the build defines KVCOURSE_CMAKE"
#endif

namespace fs = std::filesystem;
using testing_support::has;
using testing_support::read_file;
using testing_support::run;
using testing_support::sh_quoted;
using testing_support::source_dir;
using testing_support::TempDir;

namespace {

// The files a learner edits, from the manifest: "src/kvcache.cpp", ...
std::vector<std::string> learner_files() {
  auto r = run(std::string(KVCOURSE_CMAKE) +
                   " -DMANIFEST=" + sh_quoted(source_dir() / "stages" / "manifest.json") +
                   " -DWHAT=files -P " + sh_quoted(source_dir() / "autograders" / "manifest.cmake"),
               false);
  EXPECT_EQ(r.exit_code, 0);
  std::vector<std::string> files;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) files.push_back(line);
  return files;
}

// Grades every stage in `repo` as JSON; the grader's exit status is checked by the caller.
nlohmann::json grade_all(const fs::path& repo, int& exit_code) {
  const fs::path file = repo / "results.json";
  auto r = run("KVCOURSE_PROGRESS=" + sh_quoted(repo / "progress.json") + " " +
               sh_quoted(repo / "build" / "bin" / "grader") + " --all --format json -o " +
               sh_quoted(file));
  exit_code = r.exit_code;
  return nlohmann::json::parse(read_file(file), nullptr, false);
}

}  // namespace

TEST(export_learner, refuses_a_folder_that_is_not_empty) {
  TempDir out;
  testing_support::write_file(out / "keep.txt", "mine\n");
  auto r = run("bash " + sh_quoted(source_dir() / "scripts" / "export-learner.sh") + " " +
               sh_quoted(out.path()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "not empty")) << r.output;
  EXPECT_EQ(read_file(out / "keep.txt"), "mine\n");
}

TEST(export_learner, builds_and_grades_without_reference_or_tests) {
  TempDir work;
  const fs::path repo = work / "learner";
  auto exported = run("bash " + sh_quoted(source_dir() / "scripts" / "export-learner.sh") + " " +
                      sh_quoted(repo));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;

  // What a student must not get, and what they need.
  for (const char* absent : {"reference", "tests", "grader/gen"})
    EXPECT_FALSE(fs::exists(repo / absent)) << absent;
  // Nor the stages' catalogues of mistakes (edits of the reference) and their transcripts.
  for (const auto& e : fs::recursive_directory_iterator(repo / "stages"))
    EXPECT_FALSE(e.is_directory() &&
                 (e.path().filename() == "mistakes" || e.path().filename() == "golden"))
        << e.path();
  for (const char* present : {"README.md", "scripts/start.sh", "scripts/test.sh", "scripts/deps.sh",
                              ".ci/run", ".github/workflows/classroom.yml", "stages/manifest.json",
                              "include/course", "model/gpt2.cpp", "grader/cli/main.cpp"})
    EXPECT_TRUE(fs::exists(repo / present)) << present;
  const std::string readme = read_file(repo / "README.md");
  EXPECT_TRUE(has(readme, "bash scripts/start.sh") && has(readme, "bash scripts/test.sh"))
      << "the two-command quick start";
  const std::string workflow = read_file(repo / ".github/workflows/classroom.yml");
  std::string runners;
  for (const handout::ManifestStage& s : handout::manifest_stages()) {
    const std::string id = "stage-" + std::to_string(s.number);
    // One graded step per stage, worth its points.
    EXPECT_TRUE(has(workflow, "id: " + id + "\n")) << id;
    EXPECT_TRUE(has(workflow,
                    "command: sudo -E build/bin/grader --stage " + s.slug + " --sandbox strict\n"))
        << s.slug;
    const size_t step = workflow.find("id: " + id + "\n");
    EXPECT_TRUE(step != std::string::npos &&
                workflow.find("max-score: " + std::to_string(int(s.points)) + "\n", step) ==
                    workflow.find("max-score: ", step))
        << s.slug << "'s points";
    runners += (runners.empty() ? "" : ",") + id;
  }
  EXPECT_TRUE(has(workflow, "runners: " + runners + "\n")) << workflow;
  EXPECT_EQ(learner_files(), handout::learner_files())
      << "autograders/manifest.cmake reads the manifest";
  for (const std::string& f : learner_files())
    EXPECT_EQ(read_file(repo / f), read_file(source_dir() / f)) << f;

  // Configure and build in the clean folder: only what the learner's first command builds.
  auto configured = run("cd " + sh_quoted(repo) + " && " + KVCOURSE_CMAKE + " --preset default");
  ASSERT_EQ(configured.exit_code, 0) << configured.output;
  EXPECT_FALSE(has(configured.output, "CMake Warning")) << configured.output;
  auto built = run(std::string(KVCOURSE_CMAKE) + " --build " + sh_quoted(repo / "build") +
                   " --target grader runner-learner --parallel 2");
  ASSERT_EQ(built.exit_code, 0) << built.output;

  // The skeleton: every stage fails, each case with "not implemented yet".
  int status = -1;
  nlohmann::json skeleton = grade_all(repo, status);
  EXPECT_EQ(status, 1);
  ASSERT_FALSE(skeleton.is_discarded());
  ASSERT_GT(skeleton["stages"].size(), 0u);
  for (const auto& stage : skeleton["stages"]) {
    EXPECT_EQ(stage["passed"], 0) << stage["slug"];
    for (const auto& c : stage["cases"])
      EXPECT_TRUE(has(c["message"], "not implemented yet")) << stage["slug"] << c;
  }

  // The reference's files in their places: every stage passes.
  for (const std::string& f : learner_files())
    fs::copy_file(source_dir() / "reference" / fs::path(f).filename(), repo / f,
                  fs::copy_options::overwrite_existing);
  auto rebuilt = run(std::string(KVCOURSE_CMAKE) + " --build " + sh_quoted(repo / "build") +
                     " --target runner-learner");
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.output;
  nlohmann::json reference = grade_all(repo, status);
  EXPECT_EQ(status, 0);
  ASSERT_FALSE(reference.is_discarded());
  EXPECT_EQ(reference["passed"], true);
  for (const auto& stage : reference["stages"]) {
    std::string failed;  // each failing case's name and message, to say why
    for (const auto& c : stage["cases"])
      if (c.value("status", "") != "passed") failed += "\n" + c.dump().substr(0, 600);
    EXPECT_EQ(stage["passed"], stage["total"]) << stage["slug"] << failed;
  }
}
