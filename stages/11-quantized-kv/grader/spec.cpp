// The input and output forms of stage quantized-kv's adapters (wire/adapter_spec.hpp):
// blocks of values quantized and read back (run_q8_blocks), and a decode on a q8_0 cache
// (run_q8_decode).
#include "wire/spec_checks.hpp"

namespace course::stage_quantized_kv {

namespace {

using namespace spec;

// input.values: [n_blocks, 32] floats, at least one block.
void check_blocks(const json& input) {
  const std::string where = "input.values";
  const Tensor t = tensor_at(field(input, "input", "values"), where);
  if (t.shape.size() != 2 || t.shape[1] != 32 || t.shape[0] < 1)
    bad(where, "must be a tensor of shape [n_blocks, 32] with at least one block");
}

void blocks_output(const json& output) {
  for (const char* name : {"scales", "codes", "dequantized"}) tensor_member(output, "output", name);
}

void check_token_run(const json& input) {
  check_input_weights(input);
  check_tokens(input, "tokens", "input");
}

// A GPT-2 run's members, and the quantized cache's codes and scales.
void q8_run_output(const json& output) {
  gpt2_run_output(output);
  for (const char* name : {"key_codes", "key_scales", "value_codes", "value_scales"})
    tensor_member(output, "output", name);
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_q8_blocks", check_blocks, blocks_output},
      {"run_q8_decode", check_token_run, q8_run_output},
  };
  return specs;
}

}  // namespace course::stage_quantized_kv
