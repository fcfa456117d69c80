// A stage is its folder and its manifest entry, and nothing else: in a copy of the course,
// a throw-away stage is added (stages/11-layer-lengths/ with its lesson, its case builder,
// its part of the seeded generator, a known mistake with its catalogue text, and an adapter
// of its own, run_layer_lengths: its input and output forms, its binding over the learner's
// run_model_cache_shapes, and its rules) plus one entry in stages/manifest.json, and no
// other file is edited. The copy must then build, generate the stage's fixtures (with the mistake's
// record), grade it (the reference passes, the mistake is named as itself), export it to
// the learner and package it for Gradescope. Slow (it builds the grader in the copy):
// CTest labels "slow" and "build".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

#ifndef KVCOURSE_CMAKE
#error "the build defines KVCOURSE_CMAKE"
#endif

namespace fs = std::filesystem;
using testing_support::has;
using testing_support::sh_quoted;
using testing_support::read_file;
using testing_support::run;
using testing_support::source_dir;
using testing_support::TempDir;
using testing_support::write_file;

namespace {

const char* const kSlug = "layer-lengths";
const char* const kFolder = "11-layer-lengths";

// The stage's own files, written into `course`/stages/<kFolder>/.
void write_stage_folder(const fs::path& course) {
  const fs::path stage = course / "stages" / kFolder;
  write_file(stage / "lesson.md",
             "# Layer lengths\n\nEach layer of a ModelCache counts its own appends.\n\n"
             "## Mistake: the length first\n\nA shape row is [12, length, 64].\n");
  write_file(stage / "gen" / "cases.cpp", R"(#include "gen/cases.hpp"

namespace course::stage_layer_lengths {

std::vector<CaseSpec> cases() {
  return {{"layer-lengths", "01-two-layers", "Appends to layers 0 and 3 give each length 1.",
           "run_layer_lengths", {{"appends", {0, 3}}}, nullptr},
          {"layer-lengths", "02-one-layer-thrice", "Three appends to layer 5 give it length 3.",
           "run_layer_lengths", {{"appends", {5, 5, 5}}}, nullptr}};
}

}  // namespace course::stage_layer_lengths
)");
  write_file(stage / "gen" / "random.cpp", R"(#include "gen/draw.hpp"

namespace course::stage_layer_lengths {

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    draws::Draw d = draws::draw_for(seed, "layer-lengths", i);
    std::vector<int> appends;
    for (int n = d.between(1, 6); n > 0; --n) appends.push_back(d.between(0, 11));
    cases.push_back({"layer-lengths", draws::case_name(seed, i, "appends"),
                     "Appends to the layers " + draws::list_text(appends) + ".",
                     "run_layer_lengths", {{"appends", appends}}, nullptr});
  }
  return cases;
}

}  // namespace course::stage_layer_lengths
)");
  // Its adapter: the input form both processes check, the runner's binding (over the
  // learner's run_model_cache_shapes: each layer's length alone), and the grader's rules.
  write_file(stage / "grader" / "spec.cpp", R"(#include "wire/spec_checks.hpp"

namespace course::stage_layer_lengths {

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {{"run_layer_lengths",
      [](const json& input) {
        spec::whole_list(spec::field(input, "input", "appends"), "input.appends", 0, kInputLayers - 1, 0);
      },
      [](const json& output) { spec::int_list_member(output, "output", "lengths"); }}};
  return specs;
}

}  // namespace course::stage_layer_lengths
)");
  write_file(stage / "grader" / "bindings.cpp", R"(#include "course/adapters.hpp"
#include "runner/bindings.hpp"

namespace course::stage_layer_lengths {

void register_adapters(AdapterTable& table) {
  table["run_layer_lengths"] = [](const json& input) {
    json lengths = json::array();
    for (const ShapeRow& row : run_model_cache_shapes(int_list(field(input, "appends"), "appends")))
      lengths.push_back(row[1]);
    return json{{"lengths", lengths}};
  };
}

}  // namespace course::stage_layer_lengths
)");
  write_file(stage / "grader" / "rules.cpp", R"(#include "judge/adapter_rules.hpp"

namespace course::stage_layer_lengths {

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {{.name = "run_layer_lengths"}};
  return rules;
}

}  // namespace course::stage_layer_lengths
)");
  write_file(stage / "mistakes" / "length_first.mistake",
             "# The adapter's shape rows list the length first.\n"
             "diagnosis: ll.length_first\n"
             "stage: layer-lengths\n"
             "title: the length first\n"
             "explanation: the adapter's shape rows are {length, 12, 64}\n"
             "lesson: mistake-the-length-first\n"
             "hint: 1\n"
             "file: reference/adapters.cpp\n"
             "@@ find\n"
             "  for (int l = 0; l < n_layers; ++l) rows.push_back({n_heads, mc.layer(l).length(), "
             "head_dim});\n"
             "@@ replace\n"
             "  for (int l = 0; l < n_layers; ++l) rows.push_back({mc.layer(l).length(), n_heads, "
             "head_dim});\n"
             "@@ end\n");
}

// The manifest with the stage appended: the one edit outside its folder.
void add_manifest_entry(const fs::path& course) {
  const fs::path file = course / "stages" / "manifest.json";
  nlohmann::ordered_json manifest = nlohmann::ordered_json::parse(read_file(file));
  manifest["stages"].push_back(
      {{"slug", kSlug},
       {"title", "Layer lengths"},
       {"folder", kFolder},
       {"points", 5},
       {"files", {"src/kvcache.cpp", "adapters/adapters.cpp"}},
       {"hints",
        {"Each layer is its own KVCache.", "length() of a layer counts its appends.",
         "A shape row is {n_heads, length, head_dim}."}}});
  write_file(file, manifest.dump(2) + "\n");
}

// Every command in the copy: its own path as ccache's base folder, so that a shared cache
// (scripts' /work/cached.sh) can serve the files the copy has in common with the course.
std::string in_copy(const fs::path& course, const std::string& command) {
  return "cd " + sh_quoted(course) + " && CCACHE_BASEDIR=" + sh_quoted(course) + " " + command;
}

}  // namespace

TEST(new_stage, its_folder_and_a_manifest_entry_are_enough) {
  TempDir work;
  const fs::path course = work / "course";
  fs::create_directories(course);
  // The course as git tracks it, in a git repository of its own (the packagers copy what
  // git tracks).
  auto copied = run("cd " + sh_quoted(source_dir()) +
                    " && git ls-files -z | xargs -0 cp --parents -t " + sh_quoted(course));
  ASSERT_EQ(copied.exit_code, 0) << copied.output;
  write_stage_folder(course);
  add_manifest_entry(course);
  auto tracked = run(in_copy(course, "git init -q . && git add -A"));
  ASSERT_EQ(tracked.exit_code, 0) << tracked.output;

  // Built: the grader, the generator, the reference and the mistake's runner.
  auto configured = run(in_copy(course, std::string(KVCOURSE_CMAKE) + " --preset default"));
  ASSERT_EQ(configured.exit_code, 0) << configured.output;
  auto built = run(in_copy(course, std::string(KVCOURSE_CMAKE) +
                                       " --build build --parallel 2 --target grader make-fixtures "
                                       "runner-reference runner-buggy-length_first"));
  ASSERT_EQ(built.exit_code, 0) << built.output.substr(
      built.output.size() > 6000 ? built.output.size() - 6000 : 0);

  // Its fixtures and hidden cases, with the mistake's answers recorded.
  auto generated =
      run(in_copy(course, "build/bin/make-fixtures --stage " + std::string(kSlug) +
                              " --out fixtures --hidden fixtures-hidden --mistakes stages --catalogues stages "
                              "--runners build/bin --weights build/weights"));
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  for (const char* set : {"fixtures", "fixtures-hidden"}) {
    const fs::path dir = course / set / kSlug;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_FALSE(fs::is_empty(dir)) << dir;
  }
  EXPECT_TRUE(fs::exists(course / "fixtures" / kSlug / "01-two-layers.json")) << generated.output;
  // The other stages' fixtures are as the course has them.
  auto others = run("diff -r " + sh_quoted(source_dir() / "fixtures" / "multi-layer-cache") + " " +
                    sh_quoted(course / "fixtures" / "multi-layer-cache"));
  EXPECT_EQ(others.exit_code, 0) << others.output;

  // Graded: the reference passes; the mistake's runner is named as that mistake.
  const std::string grader = "NO_COLOR=1 KVCOURSE_PROGRESS=" + sh_quoted(work / "progress.json") +
                             " build/bin/grader --no-times --stage " + kSlug;
  auto reference = run(in_copy(course, grader + " --impl reference"));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_TRUE(has(reference.output, "01-two-layers")) << reference.output;
  EXPECT_TRUE(has(read_file(course / "fixtures" / kSlug / "01-two-layers.json"), "\"run_layer_lengths\""));
  auto buggy = run(in_copy(course, grader + " --runner build/bin/runner-buggy-length_first"));
  EXPECT_EQ(buggy.exit_code, 1) << buggy.output;
  EXPECT_TRUE(has(buggy.output, "ll.length_first")) << buggy.output;
  EXPECT_TRUE(
      has(buggy.output, "stages/" + std::string(kFolder) + "/lesson.md#mistake-the-length-first"))
      << buggy.output;

  // Exported: the lesson, the catalogue and the fixtures; not the generator's part or the
  // mistakes; a graded step in the classroom workflow.
  auto add_fixtures = run(in_copy(course, "git add -A"));
  ASSERT_EQ(add_fixtures.exit_code, 0) << add_fixtures.output;
  const fs::path learner = work / "learner";
  auto exported = run(in_copy(course, "bash scripts/export-learner.sh " + sh_quoted(learner)));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_TRUE(fs::exists(learner / "stages" / kFolder / "lesson.md"));
  for (const char* part : {"catalogue.json", "spec.cpp", "bindings.cpp", "rules.cpp"})
    EXPECT_TRUE(fs::exists(learner / "stages" / kFolder / "grader" / part)) << part;
  EXPECT_TRUE(fs::exists(learner / "fixtures" / kSlug / "01-two-layers.json"));
  EXPECT_FALSE(fs::exists(learner / "stages" / kFolder / "gen"));
  EXPECT_FALSE(fs::exists(learner / "stages" / kFolder / "mistakes"));
  EXPECT_TRUE(has(read_file(learner / ".github" / "workflows" / "classroom.yml"),
                  std::string("--stage ") + kSlug))
      << "the classroom workflow grades the new stage";

  // Packaged for Gradescope: the same, and the hidden cases.
  const fs::path zip = work / "autograder.zip";
  auto packaged = run(in_copy(course, "bash scripts/package-gradescope.sh " + sh_quoted(zip)));
  ASSERT_EQ(packaged.exit_code, 0) << packaged.output;
  auto listed = run("unzip -Z1 " + sh_quoted(zip), false);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_TRUE(has(listed.output, "course/stages/" + std::string(kFolder) + "/lesson.md\n"))
      << listed.output;
  EXPECT_TRUE(
      has(listed.output, "course/fixtures/" + std::string(kSlug) + "/01-two-layers.json\n"));
  EXPECT_TRUE(has(listed.output, "course/fixtures-hidden/" + std::string(kSlug) + "/"));
  EXPECT_FALSE(has(listed.output, "course/stages/" + std::string(kFolder) + "/gen/"));
  EXPECT_FALSE(has(listed.output, "course/stages/" + std::string(kFolder) + "/mistakes/"));
}
