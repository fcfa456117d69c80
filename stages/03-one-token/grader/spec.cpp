// The input forms of stage one-token's adapters (wire/adapter_spec.hpp): the attention
// probe over one layer's rows (attend_one) and a decode of tokens one by one (run_decode).
#include "wire/spec_checks.hpp"

namespace course::stage_one_token {

namespace {

using namespace spec;

void check_attend_one(const json& input) {
  check_probe_cache(input);
  model_dim_floats(tensor_at(field(input, "input", "q"), "input.q"), "input.q");
}

void check_token_run(const json& input) {
  check_input_weights(input);
  check_tokens(input, "tokens", "input");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"attend_one", check_attend_one, probe_output},
      {"run_decode", check_token_run, gpt2_run_output},
  };
  return specs;
}

}  // namespace course::stage_one_token
