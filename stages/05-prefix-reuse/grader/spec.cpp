// The input form of stage prefix-reuse's adapter (wire/adapter_spec.hpp): a prefix, then
// suffixes that each continue a clone of its cache.
#include "wire/spec_checks.hpp"

namespace course::stage_prefix_reuse {

namespace {

using namespace spec;

void check_prefix_reuse(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prefix", "input");
  check_token_lists(input, "suffixes");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {{"run_prefix_reuse", check_prefix_reuse}};
  return specs;
}

}  // namespace course::stage_prefix_reuse
