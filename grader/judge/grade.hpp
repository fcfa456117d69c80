// Grading one stage: load its fixtures, run every case in a runner process, compare,
// localize each failure and identify known mistakes (diagnose.hpp). The runner is
// restarted after a case that kills it, so one crash fails one case and the rest still
// run. With GradeOptions::jobs, several runners take the cases in turn, each in a thread
// of its own; the results come in case order all the same.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/compare.hpp"
#include "judge/diagnose.hpp"
#include "judge/speed.hpp"
#include "judge/stages.hpp"
#include "sandbox/process.hpp"
#include "sandbox/sandbox.hpp"

namespace course {

enum class CaseStatus { passed, failed, not_implemented, crashed, timed_out, exception, runner_error };
const char* status_name(CaseStatus s);  // "passed", "failed", "not_implemented", ...

// Where a case comes from: the committed fixtures the learner has (visible), the
// instructor-only set an autograder holds back (hidden: its input is never shown, and
// Gradescope shows its test only once grades are published), or drawn for this run by
// `grader --random` (random: no mistake records, so only localization diagnoses it).
enum class CaseOrigin { visible, hidden, random };
const char* origin_name(CaseOrigin o);  // "visible", "hidden", "random"
// What stands for a hidden case's input wherever an input would be shown.
inline constexpr const char* kHiddenInput = "not shown (a hidden case)";

struct CaseResult {
  std::string name;
  CaseOrigin origin = CaseOrigin::visible;
  std::string replay;          // random: the command line that grades this case again
  std::string checks;          // the fixture's sentence
  std::string input_summary;   // short, one line
  CaseStatus status = CaseStatus::failed;
  std::string message;         // one line on why it did not pass (empty when passed)
  std::vector<Mismatch> mismatches;
  std::vector<std::string> where;   // failed: where the output first departs (localize)
  std::vector<Diagnosis> diagnoses; // failed, with mistake records: the stage's identified mistakes
  std::string digest;               // failed: output_digest of the output, for identify
  std::string note;                 // passed: e.g. the work the cache saved
  std::string output;          // what the code under test printed during this case
  bool output_truncated = false;
  double seconds = 0;
  // A timed case that passed (judge/speed.hpp): its pair of CPU times, or why it has none.
  std::optional<SpeedSample> speed;
  std::string speed_problem;
  // With GradeOptions::keep_failed_outputs, on the stage's first failed case: the fixture's
  // expected output and the code under test's output (cli/html_report.hpp draws them).
  json expected_output, actual_output;
};

struct StageResult {
  const Stage* stage = nullptr;
  std::vector<CaseResult> cases;
  std::vector<Diagnosis> identified;  // mistakes that agree with every graded case that has records
  // A stage with timed cases (stage speed): its speed, also its last result, "speed".
  std::optional<SpeedSummary> speed;
  double seconds = 0;
  // Every case of the stage: more than cases.size() while the stage is still being graded
  // (GradeOptions::on_case), when nothing is identified yet.
  size_t expected_cases = 0;
  bool partial() const { return expected_cases > cases.size(); }
  int passed() const;
  bool all_passed() const { return !cases.empty() && passed() == int(cases.size()); }
};

struct GradeOptions {
  std::string runner;                     // runner executable
  std::filesystem::path fixtures_root;    // folder holding one folder per stage
  // Each case's CPU budget in seconds, set explicitly (`grader --timeout SECONDS`); 0: the
  // budget is derived from the case's work (case_budget).
  double explicit_cpu_seconds = 0;
  // The folder of the synthetic weights files the build writes (build/weights:
  // gpt2-small-<seed>.weights). A stage whose setup names such weights hands its file to
  // the runner, read-only, which maps it instead of generating them; no file there (or
  // an empty folder name): the runner generates them.
  std::filesystem::path weights_dir;
  // The speed-baseline program that times a timed case's work with the model's own loop
  // (judge/speed.hpp); empty: timed cases get no verdict on speed ("not timed").
  std::string speed_baseline;
  std::string only_case;                  // grade only this case (empty: all)
  sandbox::Config sandbox;                // how the runner is contained (sandbox.hpp)
  // The hidden set, graded after the visible cases: a folder holding one folder per stage
  // (empty: none; a stage without a folder there has no hidden cases).
  std::filesystem::path hidden_root;
  // Fresh cases of this run, by stage slug, graded last (grader --random; fresh_cases.hpp).
  std::map<std::string, std::vector<Fixture>> random_cases;
  std::string random_replay;  // "grader --random 2 --seed 7": a random case's replay starts so
  // Keep the expected and actual outputs of each stage's first failed case (--report).
  bool keep_failed_outputs = false;
  // How many runners grade a stage's cases at the same time (`grader --jobs`), each case
  // in one of them; the results, the streaming (on_case) and every message are the same
  // as with one, unless the code under test keeps state from case to case (each runner
  // has its own history: grader/COST.md). At most one per case, and in the uid mode one
  // per uid reserved (sandbox::reserve_slots). 1: one runner, the cases one after another.
  int jobs = 1;
  // Called after each case with the results so far (partial(): watch mode shows the first
  // failure as soon as it is known, and the rest as they come).
  std::function<void(const StageResult&)> on_case;
};

// What a case may take (process.hpp's Budget) and where that comes from. Derived: a
// floor for the runner's start of a case, plus an allowance for each row the reference
// put through GPT-2 small for this case when the fixture was written (Fixture::model_rows:
// positions embedded plus rows of logits). The reference needs at most about 0.03 CPU-s
// a row on this project's 2-core machine (a one-row decode step read all 495 MB of
// float weights; grader/COST.md; with bfloat16 matrices it reads 248 MB and takes about
// 0.015), so the allowance is about eight times that (sixteen now), and the floor
// covers a debug build of the learner's code on the small cases. A fixture that does not
// record its work (written by an older generator) is counted from its input instead:
// every token id and list entry, and each "max_new_tokens" per sequence asked for.
// Explicit (--timeout SECONDS): that many CPU seconds. The wall clock is a backstop ten
// times the CPU budget, at least a minute when derived, for a runner that sleeps or
// blocks; a machine busy with other work slows the case in wall time, not in CPU time, so
// a verdict does not depend on the load.
struct CaseBudget {
  Budget budget;
  bool derived = true;
  int64_t model_rows = -1;  // derived: the rows the fixture records (-1: not recorded)
  int64_t tokens = 0;       // derived without a record: the tokens counted in the input
};
inline constexpr double kCaseCpuFloor = 3.0;  // CPU seconds, every case
inline constexpr double kCpuPerModelRow =
    0.25;  // CPU seconds per row the reference puts through the model
inline constexpr double kCpuPerToken = 0.25;    // without a record: per token of the input
inline constexpr double kCaseCpuCeiling = 120;  // CPU seconds, a derived budget at most
inline constexpr double kWallFactor = 10;       // the wall backstop, times the CPU budget
inline constexpr double kSetupCpuSeconds = 30;  // the stage's setup (the weights), derived
CaseBudget case_budget(const Fixture& fx, const GradeOptions& options);
// The stage's setup (building or mapping the weights): its own budget, six case budgets
// when explicit.
Budget setup_budget(const GradeOptions& options);
// For a fixture that does not record its work: the tokens its input puts through the
// model, every integer in a list, anywhere in the input (token ids, chunks, prompts, drafts), and
// each "max_new_tokens" once per sequence it is asked for (times the "suffixes" beside it).
int64_t input_tokens(const json& input);

// Throws FixtureError for a missing or broken fixture (or no case named only_case: the
// message lists the stage's cases), std::runtime_error when the runner cannot be started:
// both are environment errors (exit 2), not failed cases.
StageResult grade_stage(const Stage& stage, const GradeOptions& options);

// Every case of the stage grade_stage would grade, in order: the visible ones, the hidden
// ones, the random ones (only `only_case` when that is not empty). origins[i] says where
// fixtures[i] comes from; a hidden case's input_summary is never made. Throws FixtureError
// like grade_stage.
struct StageCases {
  std::vector<Fixture> fixtures;
  std::vector<CaseOrigin> origins;
};
StageCases stage_cases(const Stage& stage, const GradeOptions& options);

// grade_stage on cases already loaded (stage_cases, or the fixture generator's cases
// before they are written: gen/mistake_runs.hpp records each mistake's answers from
// this). options.fixtures_root, hidden_root, random_cases and only_case are not read.
StageResult grade_cases(const Stage& stage, const StageCases& cases, const GradeOptions& options);

// The names of a stage's cases, in order. Throws FixtureError like grade_stage.
std::vector<std::string> case_names(const Stage& stage, const std::filesystem::path& fixtures_root);

}  // namespace course
