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

// The probe's output: {"out": [12, 64]}.
void attention_output(const json& output) { tensor_member(output, "output", "out"); }

// A decode's cache, logits [n_steps, vocab] and work.
void decode_output(const json& output) {
  cache_members(output, "output");
  tensor_member(output, "output", "logits");
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"attend_one", check_attend_one, attention_output},
      {"run_decode", check_token_run, decode_output},
  };
  return specs;
}

}  // namespace course::stage_one_token
