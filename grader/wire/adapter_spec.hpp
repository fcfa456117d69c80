// One spec per adapter: the form of the input each adapter takes, checked field by field,
// and shared by both sides of the process boundary. The stage that introduces an adapter
// states its form in its own folder (stages/<folder>/grader/spec.cpp, written with
// wire/spec_checks.hpp), beside the adapter's binding (grader/bindings.cpp) and its
// localizer (grader/localize.cpp); CMake gathers the stages' specs from the manifest
// (stage_specs, kvcourse_stage_table). The runner checks every request's input by its spec
// before the binding decodes it (runner/bindings.cpp: a bad one is answered "bad_request"
// naming the field), and the grader checks every fixture by it before any runner sees it
// (judge/stage_fixtures.hpp: a bad one is an error of the course, exit 2, "the course is
// broken: <file>: <problem>"). Each stage's setup is checked here too: one the runners can
// prepare.
//
// A binding without a spec serves nothing (the runner answers "bad_request"); a test
// checks that the two lists of names agree, and that every committed fixture passes.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "wire/limits.hpp"
#include "wire/shape.hpp"
#include "wire/tensor.hpp"

namespace course {

// The sizes the specs check against (GPT-2 small's config, wire/shape.hpp).
inline constexpr int kInputLayers = shape::kLayers;
inline constexpr int kInputModelDim = shape::kDModel;
inline constexpr int kInputVocab = shape::kVocab;
inline constexpr int kInputContext = shape::kContext;

// "input.plan[2].k: must hold 768 floats, not 5 (adapter run_cache_plan)", or "adapter "x"
// is not one the runners serve (they serve ...)".
struct AdapterInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One adapter's input form. check_input throws spec::BadField (wire/spec_checks.hpp) at
// the first field that is not of the form.
struct AdapterSpec {
  const char* name;
  void (*check_input)(const json& input);
};

// Each stage's specs (stage_<id>::adapter_specs in its grader/spec.cpp), in course order:
// the table CMake writes from stages/manifest.json (kvcourse_stage_table).
struct StageSpecs {
  const char* slug;
  const std::vector<AdapterSpec>& (*specs)();
};
const std::vector<StageSpecs>& stage_specs();

// Every adapter with a spec, by name, in name order.
std::vector<std::string> served_adapters();
bool has_adapter_spec(const std::string& adapter);

// Throws AdapterInputError when `input` is not of the form `adapter` takes, or when there
// is no such adapter.
void check_adapter_input(const std::string& adapter, const json& input);

// The problem with a stage's setup (stages/manifest.json, sent to the runner before the
// first case: {} or {"weights": {...}}), or "" when there is none.
std::string setup_problem(const json& setup);

}  // namespace course
