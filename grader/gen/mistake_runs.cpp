#include "gen/mistake_runs.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <stdexcept>
#include <thread>

#include "judge/grade.hpp"
#include "judge/stages.hpp"
#include "judge/variants.hpp"
#include "wire/digest.hpp"

namespace fs = std::filesystem;

namespace course {

namespace {

// What each case may take: the CPU seconds catalogue_test grades the mistakes with
// (`--timeout 120`), since a mistake may do far more work than the reference.
constexpr double kCaseCpuSeconds = 120;

// One variant's answer to one case: its record, or why there is none.
struct Record {
  std::string digest;   // kMistakePasses, or the digest grade_cases computed
  std::string problem;  // no record: what happened instead
  std::string failure;  // an alternative that fails: the first difference
};

std::vector<Record> grade_variant(const Variant& v, const Stage& stage, const StageCases& cases,
                                  const RecordOptions& o) {
  GradeOptions options;
  options.runner = v.runner.string();
  options.explicit_cpu_seconds = kCaseCpuSeconds;
  options.weights_dir = o.weights_dir;
  const StageResult result = grade_cases(stage, cases, options);
  std::vector<Record> records;
  // One record per case: not the speed verdict that follows a stage's timed cases.
  for (size_t i = 0; i < cases.fixtures.size() && i < result.cases.size(); ++i) {
    const CaseResult& c = result.cases[i];
    Record r;
    if (c.status == CaseStatus::passed)
      r.digest = kMistakePasses;
    else if ((c.status == CaseStatus::failed || c.status == CaseStatus::exception) &&
             !c.digest.empty())
      r.digest = c.digest;
    else
      r.problem = std::string(status_name(c.status)) + ": " + c.message;
    r.failure = c.mismatches.empty() ? c.message : c.mismatches.front().summary;
    records.push_back(std::move(r));
  }
  return records;
}

std::string describe(const VariantFile& v) {
  return v.name + " (" + v.id + (v.parameter.empty() ? "" : ", " + v.parameter) + ")";
}

}  // namespace

std::vector<Variant> read_variants(const fs::path& stages_dir, const fs::path& runners_dir,
                                   const std::string& only_stage) {
  std::vector<Variant> out;
  for (VariantFile& file : stage_variant_files(stages_dir, stage_table())) {
    if (!only_stage.empty() && file.stage != only_stage) continue;
    fs::path runner = runners_dir / file.runner_name();
    if (!fs::exists(runner))
      throw std::runtime_error(runner.string() + " is not built (cmake --build build)");
    out.push_back({std::move(file), std::move(runner)});
  }
  return out;
}

void record_mistakes(const std::string& stage_slug, const std::vector<Variant>& all,
                     std::vector<Fixture>& fixtures, const RecordOptions& o) {
  const Stage* stage = find_stage(stage_slug);
  if (!stage) throw std::runtime_error("no stage " + stage_slug + " in stages/manifest.json");
  std::vector<const Variant*> variants;
  for (const Variant& v : all)
    if (v.file.stage == stage_slug) variants.push_back(&v);
  // The cases as the grader will load them from their files (JSON numbers of the types a
  // parse gives, tensors as numbers): what a learner's answer is checked against.
  StageCases cases;
  for (const Fixture& fx : fixtures)
    cases.fixtures.push_back(parse_fixture(fixture_to_json(fx).dump(), fx.name));
  cases.origins.assign(fixtures.size(), CaseOrigin::visible);

  // Each variant in its own runner process, `jobs` of them at a time.
  std::vector<std::vector<Record>> answers(variants.size());
  std::vector<std::string> errors(variants.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < variants.size();) {
      try {
        answers[i] = grade_variant(*variants[i], *stage, cases, o);
      } catch (const std::exception& e) {
        errors[i] = variants[i]->runner.string() + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, o.jobs); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) throw std::runtime_error(e);

  std::vector<std::string> problems;
  std::map<std::vector<std::string>, std::vector<std::string>> by_answers;  // records -> names
  for (size_t i = 0; i < variants.size(); ++i) {
    const VariantFile& v = variants[i]->file;
    std::vector<std::string> records;
    for (size_t c = 0; c < fixtures.size(); ++c) {
      const Record& a = answers[i].at(c);
      if (a.digest.empty()) {
        if (!o.prove_catalogue) continue;
        problems.push_back(v.name + " gives no output for case " + fixtures[c].name + ": " +
                           a.problem);
        continue;
      }
      records.push_back(a.digest);
      if (!v.mistake && records.back() != kMistakePasses)
        problems.push_back("the alternative " + v.name + " fails case " + fixtures[c].name + ": " +
                           a.failure);
      if (v.mistake) fixtures[c].mistakes.push_back({v.id, v.parameter, records.back()});
    }
    if (!v.mistake || records.size() != fixtures.size() || !o.prove_catalogue) continue;
    if (std::all_of(records.begin(), records.end(),
                    [](const std::string& r) { return r == kMistakePasses; }))
      problems.push_back("the mistake " + describe(v) + " passes every case of " + stage_slug +
                         ": add a case that catches it");
    by_answers[records].push_back(describe(v));
  }
  for (const auto& [records, names] : by_answers) {
    if (names.size() < 2) continue;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    problems.push_back("no case of " + stage_slug + " tells these mistakes apart: " + list +
                       ". Add a case on which their outputs differ");
  }
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    throw std::runtime_error("the catalogue of mistakes does not hold:" + text);
  }
}

}  // namespace course
