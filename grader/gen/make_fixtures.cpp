// make-fixtures: runs every case in cases_*.cpp through the reference implementation and
// writes fixtures/<stage>/<case>.json(.gz). Usage: make-fixtures --out DIR [--stage SLUG]
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "wire/fixture.hpp"
#include "runner/bindings.hpp"
#include "gen/cases.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes the course's fixtures from the reference implementation."};
  std::string out_dir, only_stage;
  app.add_option("--out", out_dir, "Folder to write into (one sub-folder per stage)")->required();
  app.add_option("--stage", only_stage, "Only this stage");
  CLI11_PARSE(app, argc, argv);

  std::vector<CaseSpec> cases = cache_cases();
  for (auto* more : {decode_cases, rollback_cases, paged_cases, prefix_cache_cases, batching_cases})
    for (auto& c : more()) cases.push_back(std::move(c));

  std::map<std::string, std::set<fs::path>> written;
  try {
    for (const CaseSpec& spec : cases) {
      if (!only_stage.empty() && spec.stage != only_stage) continue;
      auto it = adapter_table().find(spec.adapter);
      if (it == adapter_table().end()) throw std::runtime_error("no adapter " + spec.adapter);
      json output;
      if (spec.expect_error) {
        output = expected_error(spec, it->second);
      } else {
        output = it->second(spec.input);
      }
      Fixture f;
      f.stage = spec.stage;
      f.name = spec.name;
      f.checks = spec.checks;
      f.adapter = spec.adapter;
      f.input = spec.input;
      f.expected = spec.finalize && !spec.expect_error ? spec.finalize(output) : output;
      written[spec.stage].insert(write_fixture(fs::path(out_dir) / spec.stage, f));
    }
    // Remove fixtures of cases that no longer exist.
    for (const auto& [stage, files] : written) {
      for (const auto& entry : fs::directory_iterator(fs::path(out_dir) / stage))
        if (!files.count(entry.path())) fs::remove(entry.path());
      std::cout << stage << ": " << files.size() << " fixtures\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "make-fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
