// One spec per adapter: the form of the input each adapter takes and of the output it
// answers, checked field by field, and shared by both sides of the process boundary. The
// stage that introduces an adapter states its forms in its own folder
// (stages/<folder>/grader/spec.cpp, written with wire/spec_checks.hpp), beside the
// adapter's binding (grader/bindings.cpp) and its rules (grader/rules.cpp); CMake gathers
// the stages' specs from the manifest (stage_specs, kvcourse_stage_table).
//
// The input form: the runner checks every request's input by it before the binding
// decodes it (runner/bindings.cpp: a bad one is answered "bad_request" naming the field),
// and the grader checks every fixture by it before any runner sees it
// (judge/stage_fixtures.hpp: a bad one is an error of the course, exit 2, "the course is
// broken: <file>: <problem>"). The output form: what a binding answers and a fixture
// expects. The fixture generator checks the reference's answer by it before writing a
// fixture, the grader checks every fixture's expected output by it, and a failed answer
// whose form is not its adapter's is said so by field, and not read further
// (judge/answer.cpp). Each stage's setup is checked here too: one the runners can prepare.
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

// One adapter's forms. Each check throws spec::BadField (wire/spec_checks.hpp) at the
// first field that is not of the form: check_input on the case's input ("input.plan[2]"),
// check_output on the answer's output object ("output.logits").
struct AdapterSpec {
  const char* name;
  void (*check_input)(const json& input);
  void (*check_output)(const json& output);
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

// "output.caches[0].keys: must be a tensor, not 3 (adapter run_cache_plan)".
struct AdapterOutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws AdapterOutputError when `output` is not of the form `adapter` answers, or when
// there is no such adapter.
void check_adapter_output(const std::string& adapter, const json& output);

// The problem with a stage's setup (stages/manifest.json, sent to the runner before the
// first case: {} or {"weights": {...}}), or "" when there is none.
std::string setup_problem(const json& setup);

}  // namespace course
