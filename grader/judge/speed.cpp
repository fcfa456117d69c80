#include "judge/speed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "judge/adapter_rules.hpp"
#include "judge/grade.hpp"
#include "sandbox/process.hpp"

namespace course {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fixed(double x, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// The speed-baseline's answer is one line of JSON; more than this is refused.
constexpr size_t kMaxBaselineOutput = 1 << 16;
// It runs a few tenths of a CPU-second; a minute is a backstop for a stuck machine.
constexpr std::chrono::milliseconds kBaselineTimeout{60000};

}  // namespace

bool is_timed(const Fixture& fx) {
  const AdapterRules* rules = adapter_rules(fx.adapter);
  if (!rules || !rules->timed || !fx.input.is_object()) return false;
  const auto it = fx.input.find("timed");
  return it != fx.input.end() && it->is_boolean() && it->get<bool>();
}

std::string run_speed_baseline(const std::string& baseline, const std::string& weights,
                               uint64_t seed, const Fixture& fx, SpeedSample& sample) {
  json input = fx.input;
  input.erase("weights");
  input.erase("timed");
  const Captured c = capture_output(
      {baseline, "--weights", weights, "--seed", std::to_string(seed), "--input", input.dump()},
      kMaxBaselineOutput, kBaselineTimeout, true);
  if (!c.started) return "the yardstick " + baseline + " could not be started (is it built?)";
  if (c.timed_out) return "the yardstick " + baseline + " took more than a minute";
  if (c.too_much) return "the yardstick " + baseline + " printed more than one line";
  if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0)
    return "the yardstick " + baseline + " failed (exit status " +
           std::to_string(WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1) +
           "); run it by hand to see why";
  json out;
  try {
    out = json::parse(c.output);
  } catch (const json::exception&) {
    return "the yardstick's answer is not JSON";
  }
  if (!out.is_object() || !out.contains("cpu_s") || !out["cpu_s"].is_number() ||
      !out.contains("steps") || !out["steps"].is_number_integer() ||
      !out.contains("bytes_per_step") || !out["bytes_per_step"].is_number() ||
      !out.contains("read_gb_s") || !out["read_gb_s"].is_number() || !out.contains("tokens"))
    return "the yardstick's answer lacks a field";
  // The model's own loop must choose the reference's tokens: the case's expected ones.
  if (fx.expected.is_object() && fx.expected.contains("tokens") && out["tokens"] != fx.expected["tokens"])
    return "the model's own loop chose other tokens than the fixture's (" + out["tokens"].dump() +
           " against " + fx.expected["tokens"].dump() + "): the fixtures and the weights disagree";
  sample.baseline_cpu_s = out["cpu_s"].get<double>();
  sample.steps = out["steps"].get<int>();
  sample.bytes_per_step = out["bytes_per_step"].get<double>();
  sample.read_gb_s = out["read_gb_s"].get<double>();
  if (sample.baseline_cpu_s <= 0 || sample.steps < 1) return "the yardstick measured no time";
  return "";
}

CaseResult speed_verdict(const std::vector<Fixture>& fixtures, const std::vector<CaseResult>& cases,
                         SpeedSummary& summary) {
  CaseResult r;
  r.name = "speed";
  r.checks = "your generation's tokens per CPU-second, after a long past, are at least " +
             fixed(kSpeedMinRatio, 2) + " of the model's own cached loop's, timed in the same run";
  r.input_summary = "the timed cases";
  summary = SpeedSummary{};
  std::vector<double> ratios, tokens_s, base_tokens_s, fractions;
  int timed = 0, not_implemented = 0, not_passed = 0;
  std::string problem, first_failed, first_not_implemented;
  for (size_t i = 0; i < fixtures.size() && i < cases.size(); ++i) {
    if (!is_timed(fixtures[i])) continue;
    ++timed;
    const CaseResult& c = cases[i];
    if (c.status == CaseStatus::not_implemented && ++not_implemented == 1)
      first_not_implemented = c.message;
    if (c.status != CaseStatus::passed) {
      ++not_passed;
      if (first_failed.empty()) first_failed = c.name;
      continue;
    }
    if (!c.speed_problem.empty()) {
      if (problem.empty()) problem = c.speed_problem;
      continue;
    }
    if (!c.speed || c.speed->learner_cpu_s <= 0) {
      if (problem.empty()) problem = "the runner's CPU time could not be read";
      continue;
    }
    const SpeedSample& s = *c.speed;
    ratios.push_back(s.baseline_cpu_s / s.learner_cpu_s);
    tokens_s.push_back(s.steps / s.learner_cpu_s);
    base_tokens_s.push_back(s.steps / s.baseline_cpu_s);
    if (s.read_gb_s > 0) fractions.push_back(s.bytes_per_step * (s.steps / s.learner_cpu_s) / (s.read_gb_s * 1e9));
  }
  if (timed == 0) {
    r.status = CaseStatus::runner_error;
    r.message = "the stage has no timed case";
    return r;
  }
  if (not_passed > 0) {
    r.status = not_implemented == timed ? CaseStatus::not_implemented : CaseStatus::failed;
    const std::string prefix = "not implemented yet: ";
    if (first_not_implemented.rfind(prefix, 0) == 0) first_not_implemented.erase(0, prefix.size());
    r.message = not_implemented == timed
                    ? prefix + first_not_implemented + " (speed is timed once the timed cases pass)"
                    : "not timed: " + std::to_string(not_passed) + " of the " + std::to_string(timed) +
                          " timed cases do not give the reference's numbers yet (the first: " +
                          first_failed + "); speed counts only once they do";
    return r;
  }
  if (!problem.empty()) {
    r.status = CaseStatus::runner_error;
    r.message = "not timed: " + problem;
    return r;
  }
  summary.measured = true;
  summary.samples = int(ratios.size());
  summary.ratio = median(ratios);
  summary.tokens_per_s = median(tokens_s);
  summary.baseline_tokens_per_s = median(base_tokens_s);
  summary.bandwidth_fraction = median(fractions);
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  const std::string bandwidth =
      summary.bandwidth_fraction > 0
          ? "; that is " + fixed(100 * summary.bandwidth_fraction, 0) +
                "% of what this machine's memory allows (a step must read the weights and the "
                "cached keys and values at least once; a streaming read, in the same run)"
          : "";
  const std::string said = fixed(summary.tokens_per_s, 1) +
                           " tokens per CPU-second; the model's own loop, in the same run, " +
                           fixed(summary.baseline_tokens_per_s, 1) + ": a ratio of " +
                           fixed(summary.ratio, 2) + " (the median of " +
                           std::to_string(summary.samples) + " pairs, " + fixed(*lo, 2) + " to " +
                           fixed(*hi, 2) + ")" + bandwidth;
  if (summary.ratio >= kSpeedMinRatio) {
    r.status = CaseStatus::passed;
    r.note = said;
  } else {
    r.status = CaseStatus::failed;
    r.message = "too slow: " + said + "; at least " + fixed(kSpeedMinRatio, 2) +
                " passes. The lesson's \"Where the time goes\" says what to measure";
  }
  return r;
}

}  // namespace course
