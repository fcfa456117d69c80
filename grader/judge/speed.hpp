// Stage speed: timing the learner's generation against the model's own cached loop, in
// the same run. A timed case (its adapter's rules say `timed`, its input "timed": true)
// is first graded like any other; once its numbers pass, the grader runs the same work
// with the model's own loop in a trusted process of its own (speed-baseline,
// grader/runner/speed_baseline.cpp), right after the runner's answer. Each case so gives
// one pair of CPU times taken a moment apart, on the same machine under the same load:
// the runner's, read by the grader from the kernel (sandbox/process.hpp), and the
// baseline's own. The stage's verdict, one more result after its cases, is the median of
// the pairs' ratios against kSpeedMinRatio.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wire/fixture.hpp"

namespace course {

struct CaseResult;

// A timed case's pair of measurements.
struct SpeedSample {
  double learner_cpu_s = 0;   // the runner's CPU time for the case's exchange
  double baseline_cpu_s = 0;  // the model's own loop on the same input
  int steps = 0;              // decode steps (new tokens) in the case
  double bytes_per_step = 0;  // what a step must read at least: weights and cached K/V
  double read_gb_s = 0;       // a streaming read of the weights, right after
};

// The least median ratio (the model loop's CPU time over the learner's) that passes.
inline constexpr double kSpeedMinRatio = 0.5;

// What the stage's speed came to, for the results' formats (a leaderboard entry).
struct SpeedSummary {
  bool measured = false;       // false: not timed (see the verdict's message)
  double tokens_per_s = 0;     // the learner's, per CPU-second: median over the samples
  double baseline_tokens_per_s = 0;
  double ratio = 0;            // median of the pairs' ratios
  double bandwidth_fraction = 0;  // bytes a step must read x tokens/s, over the read's speed
  int samples = 0;
};

// Whether case `fx` is timed.
bool is_timed(const Fixture& fx);

// Runs the baseline on the timed case's input: `baseline` the speed-baseline program,
// `weights` the weights file, `seed` its seed. On success fills baseline_cpu_s, steps,
// bytes_per_step and read_gb_s and returns ""; otherwise what went wrong.
std::string run_speed_baseline(const std::string& baseline, const std::string& weights,
                               uint64_t seed, const Fixture& fx, SpeedSample& sample);

// The stage's speed verdict from its cases' results (each timed case's sample, or its
// failure), as one more result: "speed". Also fills `summary`.
CaseResult speed_verdict(const std::vector<Fixture>& fixtures, const std::vector<CaseResult>& cases,
                         SpeedSummary& summary);

}  // namespace course
