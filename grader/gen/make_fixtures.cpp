// make-fixtures: runs every stage's cases (stages/<folder>/gen/cases.cpp) through the reference
// implementation and writes fixtures/<stage>/<case>.json(.gz). With --mistakes it also runs every
// catalogued mistake and valid alternative of the stages' folders (stages/<folder>/mistakes) on
// every case of its stage (mistake_runs.hpp) and records the mistakes' answers in the fixtures.
//
//   make-fixtures --out DIR [--stage SLUG] [--mistakes stages --runners build/bin
//                 [--weights build/weights]]
//                 [--hidden DIR [--hidden-seed S] [--hidden-count K]]
//   make-fixtures --random N --seed S [--stage SLUG]
//   make-fixtures --catalogues DIR [--stage SLUG]     (alone or with --out)
//
// --hidden also writes the instructor-only hidden set: K cases per stage from the seeded
// generator (cases_random.cpp), with the mistakes' answers recorded like the visible ones.
// --random prints N fresh cases per stage (or of --stage) to standard output instead, one
// fixture document per line, answers included: what `grader --random` reads (it never
// lands in a file).
//
// --catalogues writes each stage's catalogue of known mistakes, DIR/<folder>/grader/
// catalogue.json, from the text of its .mistake files (judge/catalogue.hpp): DIR is the
// course's stages/ folder, or another folder to compare them (course_test.cpp).
//
// Without --mistakes the fixtures hold the reference's part only: what the freshness test
// compares (course_test.cpp); the confusion test proves the recorded mistakes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "gen/builders.hpp"
#include "gen/mistake_runs.hpp"
#include "gen/stage_cases.hpp"
#include "judge/catalogue.hpp"
#include "judge/stages.hpp"
#include "judge/variants.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/adapter_spec.hpp"
#include "wire/fixture.hpp"

namespace fs = std::filesystem;
using namespace course;

namespace {

// What a case that must throw expects: {"error": <the exception's type>}, the name the
// runner reports for it.
json expected_error(const CaseSpec& spec, const AdapterBinding& adapter) {
  try {
    adapter(spec.input);
  } catch (const std::exception&) {
    return {{"error", current_exception_type()}};
  }
  throw std::runtime_error(spec.stage + "/" + spec.name + ": the reference does not throw, and the case says it must");
}

// Positions embedded plus rows of logits since the last reset_work(); 0 without a model.
int64_t model_rows(const gpt2::Model* model) {
  if (!model) return 0;
  const gpt2::WorkCounts w = model->work();
  return int64_t(w.embed + w.logits);
}

Fixture reference_fixture(const CaseSpec& spec) {
  auto it = adapter_table().find(spec.adapter);
  if (it == adapter_table().end()) throw std::runtime_error("no adapter " + spec.adapter);
  Fixture f;
  f.stage = spec.stage;
  f.name = spec.name;
  f.checks = spec.checks;
  f.adapter = spec.adapter;
  f.input = spec.input;
  // What the case costs the reference, counted around the adapter alone (finalize's
  // proofs run the model too): the rows it put through GPT-2 small.
  const gpt2::Model* model =
      spec.input.contains("weights") ? &model_for(spec.input["weights"]) : nullptr;
  if (model) model->reset_work();
  if (spec.expect_error) {
    f.expected = expected_error(spec, it->second);
  } else {
    json output = it->second(spec.input);
    f.model_rows = model_rows(model);
    f.expected = spec.finalize ? spec.finalize(output) : output;
  }
  if (spec.expect_error) f.model_rows = model_rows(model);
  // The reference's answer, as the fixture keeps it, is of the form the adapter's spec
  // states (the grader checks every fixture by it too).
  try {
    check_adapter_output(spec.adapter, f.expected);
  } catch (const AdapterOutputError& e) {
    throw std::runtime_error(spec.stage + "/" + spec.name + ": the reference's " + e.what());
  }
  return f;
}

// The committed cases, in course order: each stage's own (gen/stage_cases.hpp).
std::vector<CaseSpec> committed_cases() {
  std::vector<CaseSpec> cases;
  for (const StageCases& stage : stage_cases())
    for (CaseSpec& c : stage.cases()) {
      if (c.stage != stage.slug)
        throw std::runtime_error("stage " + std::string(stage.slug) + "'s cases hold " + c.name +
                                 " of stage \"" + c.stage + "\"");
      cases.push_back(std::move(c));
    }
  return cases;
}

std::vector<CaseSpec> generated_cases(uint64_t seed, int count, const std::string& only_stage) {
  std::vector<CaseSpec> cases;
  for (const std::string& stage : random_stages())
    if (only_stage.empty() || stage == only_stage)
      for (auto& c : random_cases(stage, seed, count)) cases.push_back(std::move(c));
  return cases;
}

// Each stage's catalogue.json (or only_stage's) under out_dir/<folder>/, from the course's
// .mistake files; a stage without mistakes gets none.
void write_catalogues(const std::filesystem::path& out_dir, const std::string& only_stage) {
  for (const Stage& stage : stage_table()) {
    if (!only_stage.empty() && stage.slug != only_stage) continue;
    const std::vector<CatalogueEntry> entries =
        catalogue_from_mistakes(stage_variant_files(course_root() / "stages", {stage}));
    if (entries.empty()) continue;
    const std::filesystem::path file = out_dir / stage.folder / kCatalogueFile;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << catalogue_text(stage.slug, entries);
    std::cout << stage.slug << ": " << entries.size() << " known mistakes in " << file.string() << "\n";
  }
}

struct WriteOptions {
  std::string only_stage;
  std::vector<Variant> variants;
  bool record = false;  // run the variants (--mistakes)
  RecordOptions grading;
};

// Writes one set of cases into dir/<stage>/, removing the files of cases that are gone.
void write_set(const fs::path& dir, const std::vector<CaseSpec>& cases, const WriteOptions& o) {
  std::vector<std::string> stages;  // in case order
  std::map<std::string, std::vector<Fixture>> fixtures;
  for (const CaseSpec& spec : cases) {
    if (!o.only_stage.empty() && spec.stage != o.only_stage) continue;
    if (!fixtures.count(spec.stage)) stages.push_back(spec.stage);
    fixtures[spec.stage].push_back(reference_fixture(spec));
  }
  for (const std::string& stage : stages) {
    if (o.record) record_mistakes(stage, o.variants, fixtures[stage], o.grading);
    std::set<fs::path> written;
    for (const Fixture& f : fixtures[stage]) written.insert(write_fixture(dir / stage, f));
    for (const auto& entry : fs::directory_iterator(dir / stage))
      if (!written.count(entry.path())) fs::remove(entry.path());
    std::cout << (dir / stage).string() << ": " << written.size() << " fixtures";
    if (o.record) std::cout << ", " << fixtures[stage].front().mistakes.size() << " mistakes recorded";
    std::cout << "\n";
  }
}

// --random: each fixture as one line of JSON on standard output, nothing else there.
void print_random(uint64_t seed, int count, const std::string& only_stage) {
  for (const CaseSpec& spec : generated_cases(seed, count, only_stage))
    std::cout << fixture_to_json(reference_fixture(spec)).dump() << "\n";
  std::cout.flush();
}

// The committed hidden set's draw (fixtures-hidden/): the `fixtures` target and the
// freshness test use these defaults.
constexpr uint64_t kHiddenSeed = 2026;
constexpr int kHiddenCount = 3;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes the course's fixtures from the reference implementation."};
  std::string out_dir, hidden_dir, only_stage, mistakes_dir, runners_dir, weights_dir;
  uint64_t hidden_seed = kHiddenSeed, seed = 0;
  int hidden_count = kHiddenCount, random_count = 0;
  int jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  auto* out = app.add_option("--out", out_dir, "Folder to write into (one sub-folder per stage)");
  app.add_option("--stage", only_stage, "Only this stage");
  app.add_option("--mistakes", mistakes_dir,
                 "The course's stages/ folder: run each stage's .mistake and .alternative files "
                 "(<folder>/mistakes) on its cases");
  app.add_option("--runners", runners_dir, "Folder holding the runner-buggy-* and runner-alternative-* runners");
  app.add_option("--jobs", jobs, "Runners at a time (default: the number of cores)");
  app.add_option("--weights", weights_dir,
                 "Folder of the synthetic weights files the build writes: the runners map them");
  app.add_option("--hidden", hidden_dir, "Also write the hidden set (instructor-only) into this folder");
  app.add_option("--hidden-seed", hidden_seed, "The hidden set's seed")->capture_default_str();
  app.add_option("--hidden-count", hidden_count, "The hidden set's cases per stage")
      ->check(CLI::Range(1, 50))->capture_default_str();
  std::string catalogues_dir;
  app.add_option("--catalogues", catalogues_dir,
                 "Write each stage's catalogue of known mistakes, <folder>/grader/catalogue.json, into "
                 "this folder (the course's stages/) from its .mistake files");
  auto* random = app.add_option("--random", random_count,
                                "Print this many fresh cases per stage on standard output (one fixture per line)")
                     ->check(CLI::Range(1, 50));
  auto* seed_option = app.add_option("--seed", seed, "With --random: the seed of the draw");
  random->excludes(out);
  seed_option->needs(random);
  random->needs(seed_option);
  CLI11_PARSE(app, argc, argv);
  if (out_dir.empty() && random_count == 0 && catalogues_dir.empty()) {
    std::cerr << "make-fixtures: give --out DIR (the course's fixtures), --catalogues DIR (the course's "
                 "stages/) or --random N --seed S\n";
    return 2;
  }
  if (!mistakes_dir.empty() && runners_dir.empty()) {
    std::cerr << "make-fixtures: --mistakes needs --runners\n";
    return 2;
  }
  if (!only_stage.empty() && !find_stage(only_stage)) {
    std::cerr << "make-fixtures: no stage \"" << only_stage << "\"\n";
    return 2;
  }

  try {
    if (random_count > 0) {
      print_random(seed, random_count, only_stage);
      return 0;
    }
    if (!catalogues_dir.empty()) write_catalogues(catalogues_dir, only_stage);
    if (out_dir.empty()) return 0;
    WriteOptions o;
    o.only_stage = only_stage;
    o.grading.jobs = jobs;
    o.grading.weights_dir = weights_dir;
    o.record = !mistakes_dir.empty();
    if (o.record) o.variants = read_variants(mistakes_dir, runners_dir, only_stage);
    write_set(out_dir, committed_cases(), o);
    if (!hidden_dir.empty()) {
      o.grading.prove_catalogue = false;
      write_set(hidden_dir, generated_cases(hidden_seed, hidden_count, only_stage), o);
    }
  } catch (const std::exception& e) {
    std::cerr << "make-fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
