// The seeded case generator (grader/gen/cases_random.cpp): a generator for every stage,
// inputs that pass the grader's own input checks for many seeds, the same cases for the
// same seed, and plans the reference runs as the case says (throwing exactly when the
// case expects it). The GPT-2 cases' promises (finalize) are proved by grading the
// reference on fresh cases (fresh_cases_test.cpp).
#include <gtest/gtest.h>

#include <set>

#include "gen/builders.hpp"
#include "judge/stage_fixtures.hpp"
#include "judge/stages.hpp"
#include "test_support.hpp"

using namespace course;

namespace {

Fixture fixture_of(const CaseSpec& spec) {
  Fixture f;
  f.file = "random/" + spec.stage + "/" + spec.name;
  f.stage = spec.stage;
  f.name = spec.name;
  f.checks = spec.checks;
  f.adapter = spec.adapter;
  f.input = spec.input;
  return f;
}

bool runs_gpt2(const CaseSpec& spec) { return spec.input.contains("weights"); }

}  // namespace

TEST(random_cases, there_is_a_generator_for_every_stage_in_course_order) {
  std::vector<std::string> slugs;
  for (const Stage& s : stage_table()) slugs.push_back(s.slug);
  EXPECT_EQ(random_stages(), slugs);
  EXPECT_THROW(random_cases("no-such-stage", 1, 1), std::invalid_argument);
}

TEST(random_cases, inputs_pass_the_input_checks_for_many_seeds) {
  for (const std::string& stage : random_stages()) {
    for (uint64_t seed = 0; seed < 120; ++seed) {
      const std::vector<CaseSpec> cases = random_cases(stage, seed, 4);
      ASSERT_EQ(cases.size(), 4u) << stage;
      std::set<std::string> names;
      for (const CaseSpec& c : cases) {
        EXPECT_EQ(c.stage, stage);
        EXPECT_EQ(c.name.rfind("r" + std::to_string(seed) + "-", 0), 0u) << c.name;
        EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
        EXPECT_FALSE(c.checks.empty()) << c.name;
        EXPECT_NO_THROW(check_case_input(fixture_of(c))) << stage << " seed " << seed << " " << c.name;
      }
    }
  }
}

TEST(random_cases, the_same_seed_gives_the_same_cases_and_another_seed_others) {
  for (const std::string& stage : random_stages()) {
    const std::vector<CaseSpec> a = random_cases(stage, 7, 3), b = random_cases(stage, 7, 3),
                                other = random_cases(stage, 8, 3);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].name, b[i].name);
      EXPECT_EQ(a[i].checks, b[i].checks);
      EXPECT_EQ(a[i].input, b[i].input) << stage << " " << a[i].name;
      EXPECT_EQ(a[i].expect_error, b[i].expect_error);
    }
    // A case's draw does not depend on how many are drawn.
    const std::vector<CaseSpec> more = random_cases(stage, 7, 5);
    EXPECT_EQ(more[1].input, a[1].input) << stage;
    bool differs = false;
    for (size_t i = 0; i < a.size(); ++i) differs = differs || a[i].input != other[i].input;
    EXPECT_TRUE(differs) << stage << ": seeds 7 and 8 drew the same cases";
  }
}

// The plans (no model): the reference runs every one, and throws exactly when the case
// says it must.
TEST(random_cases, the_reference_runs_every_plan_as_the_case_expects) {
  for (const std::string& stage : random_stages()) {
    for (uint64_t seed = 0; seed < 40; ++seed) {
      for (const CaseSpec& c : random_cases(stage, seed, 3)) {
        if (runs_gpt2(c) || c.adapter == "attend_one" || c.adapter == "attend_causal") continue;
        bool threw = false;
        try {
          run_adapter(c.adapter, c.input);
        } catch (const std::exception&) {
          threw = true;
        }
        EXPECT_EQ(threw, c.expect_error) << stage << " seed " << seed << " " << c.name << ": " << c.checks;
      }
    }
  }
}
