// The input forms of stage prefill's adapters (wire/adapter_spec.hpp): the causal attention
// probe (attend_causal) and a prompt prefilled in chunks (run_prefill).
#include "wire/spec_checks.hpp"

namespace course::stage_prefill {

namespace {

using namespace spec;

void check_attend_causal(const json& input) {
  const int64_t n = check_probe_cache(input);
  const Tensor q = tensor_at(field(input, "input", "q"), "input.q");
  if (q.shape.size() != 2 || q.shape[1] != kInputModelDim || q.shape[0] < 1 || q.shape[0] > n)
    bad("input.q",
        "must be [n_rows, 768] with 1 <= n_rows <= the cache's length (" + std::to_string(n) + ")");
}

void check_chunked_run(const json& input) {
  check_input_weights(input);
  check_token_lists(input, "chunks");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"attend_causal", check_attend_causal, probe_output},
      {"run_prefill", check_chunked_run, gpt2_run_output},
  };
  return specs;
}

}  // namespace course::stage_prefill
