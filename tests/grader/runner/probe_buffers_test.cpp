// The attention probes hand the code under test an output buffer full of a poison pattern
// (a quiet NaN), not zeros: an attend_one or attend_causal that adds into `out` without
// writing it first fails them, where a zeroed buffer let it pass.
#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"

namespace {

using testing_support::bin;
using testing_support::TempDir;

testing_support::CommandResult grade(const std::string& runner, const std::string& stage,
                                     const std::string& name) {
  TempDir state;
  return testing_support::run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " NO_COLOR=1 " +
                              bin("grader") + " --no-times --runner " + bin(runner) + " --stage " +
                              stage + " --case " + name);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(probe_buffers, an_attend_one_that_adds_into_its_output_fails_the_probe) {
  const auto r = grade("runner-unzeroed-attend", "one-token", "02-attend-seven-positions");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "nan")) << r.output;
  // The reference, given the same poisoned buffer, passes: the poison is not the failure.
  EXPECT_EQ(grade("runner-reference", "one-token", "02-attend-seven-positions").exit_code, 0);
}

TEST(probe_buffers, an_attend_causal_that_adds_into_its_output_fails_the_probe) {
  const auto r = grade("runner-unzeroed-attend", "prefill", "01-causal-six-rows");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "nan")) << r.output;
  EXPECT_EQ(grade("runner-reference", "prefill", "01-causal-six-rows").exit_code, 0);
}

// The model's own steps give it buffers of their own: decode_step passes with it.
TEST(probe_buffers, the_same_runner_passes_the_decode_cases) {
  EXPECT_EQ(grade("runner-unzeroed-attend", "one-token", "04-first-token").exit_code, 0);
}

}  // namespace
