// The input and output forms of stage preemption's adapter (wire/adapter_spec.hpp): stage
// 9's requests over a pool of GPT-2 blocks that may run dry, and how a preempted request
// is brought back ("swap" or "recompute").
#include "wire/spec_checks.hpp"

namespace course::stage_preemption {

namespace {

using namespace spec;

void check_serve_preemptive(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  const json& mode = field(input, "input", "mode");
  if (!mode.is_string() || (mode != "swap" && mode != "recompute"))
    bad("input.mode", "must be \"swap\" or \"recompute\"");
  check_requests(input);
}

// Each request's tokens and logits; per step, who was admitted, resumed, preempted and
// decoded, the free blocks after it and the blocks held outside the pool; the rows through
// the model.
void serve_preemptive_output(const json& output) {
  served_requests_member(output);
  list_member(output, "output", "steps", [](const json& step, const std::string& where) {
    for (const char* name : {"admitted", "resumed", "preempted", "decoded"})
      int_list_member(step, where, name);
    int_member(step, where, "free_blocks");
    int_member(step, where, "swapped_blocks");
  });
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_serve_preemptive", check_serve_preemptive, serve_preemptive_output}};
  return specs;
}

}  // namespace course::stage_preemption
