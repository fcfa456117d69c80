// The input and output forms of stage chunked-prefill's adapter (wire/adapter_spec.hpp):
// stage 9's requests over a pool of GPT-2 blocks, with a budget of rows per step.
#include "wire/spec_checks.hpp"

namespace course::stage_chunked_prefill {

namespace {

using namespace spec;

void check_serve_chunked(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  whole(field(input, "input", "budget"), "input.budget", 1, kMaxBudget);
  check_requests(input);
}

// Each request's tokens and logits; per step, who was admitted and decoded, the prompt
// pieces, and the free blocks after it; the rows through the model.
void serve_chunked_output(const json& output) {
  served_requests_member(output);
  list_member(output, "output", "steps", [](const json& step, const std::string& where) {
    int_list_member(step, where, "admitted");
    int_list_member(step, where, "decoded");
    list_member(step, where, "chunks", [](const json& c, const std::string& at) {
      for (const char* name : {"id", "from", "to"}) int_member(c, at, name);
    });
    int_member(step, where, "free_blocks");
  });
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_serve_chunked", check_serve_chunked, serve_chunked_output}};
  return specs;
}

}  // namespace course::stage_chunked_prefill
