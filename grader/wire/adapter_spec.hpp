// What the grader checks of the course's own inputs before any runner sees them: each
// fixture names an adapter the runners serve and gives it an input of the form that
// adapter's binding parses (grader/runner/bindings_*.cpp), and each stage's setup is one
// the runners can prepare. A fixture that fails is an error of the course (exit 2, "the
// course is broken: <file>: <problem>"), never a learner's failed case, and a runner's
// "bad_request" is never needed to find one.
//
// The table here mirrors the bindings: a new adapter is added to both (a test checks that
// the two lists of names agree, and that every committed fixture passes).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wire/fixture.hpp"
#include "wire/limits.hpp"
#include "wire/shape.hpp"

namespace course {

// The sizes the bindings check against (GPT-2 small's config, wire/shape.hpp).
inline constexpr int kInputLayers = shape::kLayers;
inline constexpr int kInputModelDim = shape::kDModel;
inline constexpr int kInputVocab = shape::kVocab;
inline constexpr int kInputContext = shape::kContext;

// Every adapter a runner serves, by name, in name order.
std::vector<std::string> served_adapters();

// Throws FixtureError "<file>: adapter "x" is not one the runners serve (...)" or
// "<file>: input.plan[2].k: must hold 768 floats, not 5".
void check_case_input(const Fixture& fixture);

// The problem with a stage's setup (stages/manifest.json, sent to the runner before the
// first case: {} or {"weights": {...}}), or "" when there is none.
std::string setup_problem(const json& setup);

// The stage's fixtures in name order, each loaded and checked (its stage is `slug`, its
// case name is unique, check_case_input); only the case `only_case` when that is not
// empty. Throws FixtureError: "the course is broken: <file>: <problem>", or "stage <slug>
// has no case named ..." when only_case names none.
std::vector<Fixture> load_stage_fixtures(const std::filesystem::path& stage_dir, const std::string& slug,
                                         const std::string& only_case);

}  // namespace course
