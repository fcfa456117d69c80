// Grading one stage: load its fixtures, run every case in a runner process, compare,
// localize each failure and identify known mistakes (diagnose.hpp). The runner is restarted after a case that kills it, so one crash fails one
// case and the rest still run.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "judge/compare.hpp"
#include "judge/diagnose.hpp"
#include "judge/stages.hpp"
#include "sandbox/sandbox.hpp"

namespace course {

enum class CaseStatus { passed, failed, not_implemented, crashed, timed_out, exception, runner_error };
const char* status_name(CaseStatus s);  // "passed", "failed", "not_implemented", ...

struct CaseResult {
  std::string name;
  std::string checks;          // the fixture's sentence
  std::string input_summary;   // short, one line
  CaseStatus status = CaseStatus::failed;
  std::string message;         // one line on why it did not pass (empty when passed)
  std::vector<Mismatch> mismatches;
  std::vector<std::string> where;   // failed: where the output first departs (localize)
  std::vector<Diagnosis> diagnoses; // failed: the stage's identified mistakes (identify)
  std::string digest;               // failed: output_digest of the output, for identify
  std::string note;                 // passed: e.g. the work the cache saved
  std::string output;          // what the code under test printed during this case
  bool output_truncated = false;
  double seconds = 0;
};

struct StageResult {
  const Stage* stage = nullptr;
  std::vector<CaseResult> cases;
  std::vector<Diagnosis> identified;  // mistakes that agree with every graded case
  double seconds = 0;
  int passed() const;
  bool all_passed() const { return !cases.empty() && passed() == int(cases.size()); }
};

struct GradeOptions {
  std::string runner;                     // runner executable
  std::filesystem::path fixtures_root;    // folder holding one folder per stage
  std::chrono::milliseconds timeout{5000};  // per case
  std::string only_case;                  // grade only this case (empty: all)
  sandbox::Config sandbox;                // how the runner is contained (sandbox.hpp)
};

// Throws FixtureError for a missing or broken fixture (or no case named only_case: the
// message lists the stage's cases), std::runtime_error when the runner cannot be started:
// both are environment errors (exit 2), not failed cases.
StageResult grade_stage(const Stage& stage, const GradeOptions& options);

// The names of a stage's cases, in order. Throws FixtureError like grade_stage.
std::vector<std::string> case_names(const Stage& stage, const std::filesystem::path& fixtures_root);

}  // namespace course
