// make-fixtures: runs every case in cases_*.cpp through the reference implementation and
// writes fixtures/<stage>/<case>.json(.gz). With --mistakes it also runs every catalogued
// mistake and valid alternative of tests/buggy on every case of its stage (mistake_runs.hpp)
// and records the mistakes' answers in the fixtures.
//
//   make-fixtures --out DIR [--stage SLUG] [--mistakes tests/buggy --runners build/bin]
//
// Without --mistakes the fixtures hold the reference's part only: what the freshness test
// compares (course_test.cpp); the confusion test proves the recorded mistakes.
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>

#include "gen/cases.hpp"
#include "gen/mistake_runs.hpp"
#include "runner/bindings.hpp"
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

Fixture reference_fixture(const CaseSpec& spec) {
  auto it = adapter_table().find(spec.adapter);
  if (it == adapter_table().end()) throw std::runtime_error("no adapter " + spec.adapter);
  Fixture f;
  f.stage = spec.stage;
  f.name = spec.name;
  f.checks = spec.checks;
  f.adapter = spec.adapter;
  f.input = spec.input;
  if (spec.expect_error) {
    f.expected = expected_error(spec, it->second);
  } else {
    json output = it->second(spec.input);
    f.expected = spec.finalize ? spec.finalize(output) : output;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes the course's fixtures from the reference implementation."};
  std::string out_dir, only_stage, mistakes_dir, runners_dir;
  int jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--out", out_dir, "Folder to write into (one sub-folder per stage)")->required();
  app.add_option("--stage", only_stage, "Only this stage");
  app.add_option("--mistakes", mistakes_dir,
                 "Folder of .mistake and .alternative files: run each on its stage's cases");
  app.add_option("--runners", runners_dir, "Folder holding the runner-buggy-* and runner-alternative-* runners");
  app.add_option("--jobs", jobs, "Runners at a time (default: the number of cores)");
  CLI11_PARSE(app, argc, argv);
  if (!mistakes_dir.empty() && runners_dir.empty()) {
    std::cerr << "make-fixtures: --mistakes needs --runners\n";
    return 2;
  }

  std::vector<CaseSpec> cases = cache_cases();
  for (auto* more : {decode_cases, rollback_cases, paged_cases, prefix_cache_cases, batching_cases,
                      generate_cases})
    for (auto& c : more()) cases.push_back(std::move(c));

  try {
    std::vector<VariantFile> variants;
    if (!mistakes_dir.empty()) variants = read_variant_files(mistakes_dir, runners_dir);
    std::vector<std::string> stages;  // in case order
    std::map<std::string, std::vector<Fixture>> fixtures;
    for (const CaseSpec& spec : cases) {
      if (!only_stage.empty() && spec.stage != only_stage) continue;
      if (!fixtures.count(spec.stage)) stages.push_back(spec.stage);
      fixtures[spec.stage].push_back(reference_fixture(spec));
    }
    for (const std::string& stage : stages) {
      if (!mistakes_dir.empty()) record_mistakes(stage, variants, fixtures[stage], jobs);
      std::set<fs::path> written;
      for (const Fixture& f : fixtures[stage]) written.insert(write_fixture(fs::path(out_dir) / stage, f));
      // Remove fixtures of cases that no longer exist.
      for (const auto& entry : fs::directory_iterator(fs::path(out_dir) / stage))
        if (!written.count(entry.path())) fs::remove(entry.path());
      std::cout << stage << ": " << written.size() << " fixtures";
      if (!mistakes_dir.empty()) std::cout << ", " << fixtures[stage].front().mistakes.size() << " mistakes recorded";
      std::cout << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "make-fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
