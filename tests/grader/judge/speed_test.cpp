// Stage speed's verdict (judge/speed.hpp) from hand-made results: the median of the pairs
// against the least ratio, and every reason a stage is not timed, each said as it is.
#include "judge/speed.hpp"

#include <gtest/gtest.h>

#include "judge/grade.hpp"
#include "judge/stages.hpp"
#include "test_support.hpp"

using namespace course;

namespace {

Fixture speed_fixture(const std::string& name, bool timed) {
  Fixture fx;
  fx.stage = "speed";
  fx.name = name;
  fx.adapter = "run_speed";
  fx.input = {{"past", 896}, {"past_seed", 1}, {"prompt", {464}}, {"max_new_tokens", 4}};
  if (timed) fx.input["timed"] = true;
  return fx;
}

CaseResult passed_with(double learner_cpu, double baseline_cpu) {
  CaseResult c;
  c.status = CaseStatus::passed;
  SpeedSample s;
  s.learner_cpu_s = learner_cpu;
  s.baseline_cpu_s = baseline_cpu;
  s.steps = 4;
  s.bytes_per_step = 3.2e8;
  s.read_gb_s = 10;
  c.speed = s;
  return c;
}

struct Stage5 {
  std::vector<Fixture> fixtures;
  std::vector<CaseResult> cases;
};

// An untimed case, then five timed ones whose pairs have the given ratios (the learner's
// time 0.4 CPU-s each).
Stage5 with_ratios(const std::vector<double>& ratios) {
  Stage5 s;
  s.fixtures.push_back(speed_fixture("01-no-past", false));
  CaseResult plain;
  plain.status = CaseStatus::passed;
  s.cases.push_back(plain);
  for (size_t i = 0; i < ratios.size(); ++i) {
    s.fixtures.push_back(speed_fixture("timed-" + std::to_string(i), true));
    s.cases.push_back(passed_with(0.4, 0.4 * ratios[i]));
  }
  return s;
}

}  // namespace

TEST(speed, only_cases_marked_timed_of_a_timed_adapter_are_timed) {
  EXPECT_TRUE(is_timed(speed_fixture("a", true)));
  EXPECT_FALSE(is_timed(speed_fixture("a", false)));
  Fixture other = speed_fixture("a", true);
  other.adapter = "run_generate";  // its rules do not say timed
  EXPECT_FALSE(is_timed(other));
}

TEST(speed, passes_at_the_median_ratio_and_says_the_figures) {
  const Stage5 s = with_ratios({0.9, 0.4, 0.6, 0.55, 0.3});  // median 0.55
  SpeedSummary summary;
  const CaseResult r = speed_verdict(s.fixtures, s.cases, summary);
  EXPECT_EQ(r.name, "speed");
  EXPECT_EQ(r.status, CaseStatus::passed) << r.message;
  EXPECT_TRUE(summary.measured);
  EXPECT_EQ(summary.samples, 5);
  EXPECT_NEAR(summary.ratio, 0.55, 1e-12);
  EXPECT_NEAR(summary.tokens_per_s, 10.0, 1e-12);  // 4 steps in 0.4 CPU-s
  // 3.2e8 bytes a step at 10 tokens/s against a read of 10 GB/s.
  EXPECT_NEAR(summary.bandwidth_fraction, 0.32, 1e-12);
  EXPECT_NE(r.note.find("10.0 tokens per CPU-second"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("a ratio of 0.55 (the median of 5 pairs, 0.30 to 0.90)"), std::string::npos)
      << r.note;
  EXPECT_NE(r.note.find("32% of what this machine's memory allows"), std::string::npos) << r.note;
}

TEST(speed, fails_below_the_least_ratio_and_says_by_how_much) {
  const Stage5 s = with_ratios({0.45, 0.4, 0.48, 0.7, 0.2});  // median 0.45
  SpeedSummary summary;
  const CaseResult r = speed_verdict(s.fixtures, s.cases, summary);
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.message.find("too slow"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("a ratio of 0.45"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("at least 0.50 passes"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("Where the time goes"), std::string::npos) << r.message;
}

TEST(speed, is_not_timed_until_the_timed_cases_give_the_right_numbers) {
  Stage5 s = with_ratios({1, 1, 1});
  s.cases[2].status = CaseStatus::failed;
  s.cases[2].speed.reset();
  s.cases[2].name = "timed-1";
  SpeedSummary summary;
  CaseResult r = speed_verdict(s.fixtures, s.cases, summary);
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_FALSE(summary.measured);
  EXPECT_NE(r.message.find("not timed: 1 of the 3 timed cases"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("(the first: timed-1)"), std::string::npos) << r.message;

  for (size_t i = 1; i < s.cases.size(); ++i) {
    s.cases[i].status = CaseStatus::not_implemented;
    s.cases[i].message = "not implemented yet: run_speed (adapters/adapters.cpp)";
  }
  r = speed_verdict(s.fixtures, s.cases, summary);
  EXPECT_EQ(r.status, CaseStatus::not_implemented);
  EXPECT_EQ(r.message,
            "not implemented yet: run_speed (adapters/adapters.cpp) (speed is timed once the timed "
            "cases pass)");
}

TEST(speed, a_yardstick_that_could_not_run_is_an_error_not_a_verdict) {
  Stage5 s = with_ratios({1, 1, 1});
  s.cases[3].speed.reset();
  s.cases[3].speed_problem = "the yardstick build/bin/speed-baseline could not be started (is it built?)";
  SpeedSummary summary;
  const CaseResult r = speed_verdict(s.fixtures, s.cases, summary);
  EXPECT_EQ(r.status, CaseStatus::runner_error);
  EXPECT_EQ(r.message, "not timed: " + s.cases[3].speed_problem);
  EXPECT_FALSE(summary.measured);
}

TEST(speed, a_stage_without_timed_cases_gets_no_pass) {
  std::vector<Fixture> fixtures = {speed_fixture("01", false)};
  std::vector<CaseResult> cases(1);
  cases[0].status = CaseStatus::passed;
  SpeedSummary summary;
  EXPECT_EQ(speed_verdict(fixtures, cases, summary).status, CaseStatus::runner_error);
}
