// The input form of stage continuous-batching's adapter (wire/adapter_spec.hpp): requests
// with their prompt, token budget and arrival step, served over a pool of GPT-2 blocks.
#include "wire/spec_checks.hpp"

namespace course::stage_continuous_batching {

namespace {

using namespace spec;

void check_serve(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  check_requests(input);
}

// Each request's tokens and logits; per step, who was prefilled and decoded, and the free
// blocks after it.
void serve_output(const json& output) {
  served_requests_member(output);
  list_member(output, "output", "steps", [](const json& step, const std::string& where) {
    int_list_member(step, where, "prefilled");
    int_list_member(step, where, "decoded");
    int_member(step, where, "free_blocks");
  });
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {{"run_serve", check_serve, serve_output}};
  return specs;
}

}  // namespace course::stage_continuous_batching
