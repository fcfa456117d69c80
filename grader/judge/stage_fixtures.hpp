// A stage's fixtures as the grader loads them: each one read (wire/fixture.hpp) and checked
// before any runner sees it: it belongs to the stage, its case name is unique, and its
// input is of the form its adapter's spec says (wire/adapter_spec.hpp). A fixture that
// fails is an error of the course (exit 2, "the course is broken: <file>: <problem>"),
// never a learner's failed case, and a runner's "bad_request" is never needed to find one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wire/adapter_spec.hpp"
#include "wire/fixture.hpp"

namespace course {

// Throws FixtureError "<file>: adapter "x" is not one the runners serve (...)" or
// "<file>: input.plan[2].k: must hold 768 floats, not 5 (adapter run_cache_plan)".
void check_case_input(const Fixture& fixture);
// Throws FixtureError "<file>: the expected output: has no "logits" (adapter run_decode)"
// when the fixture's expected output is not of the form its adapter answers.
void check_case_output(const Fixture& fixture);

// The stage's fixtures in name order, each loaded and checked (its stage is `slug`, its
// case name is unique, check_case_input, check_case_output); only the case `only_case` when that is not
// empty. Throws FixtureError: "the course is broken: <file>: <problem>", or "stage <slug>
// has no case named ..." when only_case names none.
std::vector<Fixture> load_stage_fixtures(const std::filesystem::path& stage_dir,
                                         const std::string& slug, const std::string& only_case);

}  // namespace course
