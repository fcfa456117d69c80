// The input form of stage prefix-cache's adapter (wire/adapter_spec.hpp): prompts served in
// order through one prefix cache over a pool of GPT-2 blocks.
#include "wire/spec_checks.hpp"

namespace course::stage_prefix_cache {

namespace {

using namespace spec;

void check_prefix_trace(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  const json& prompts = field(input, "input", "prompts");
  if (!prompts.is_array() || prompts.size() > size_t(kMaxRequests))
    bad("input.prompts", "must be a list of 1 to " + std::to_string(kMaxRequests) + " prompts");
  check_token_lists(input, "prompts");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {{"run_prefix_trace", check_prefix_trace}};
  return specs;
}

}  // namespace course::stage_prefix_cache
