// The input form of stage continuous-batching's adapter (wire/adapter_spec.hpp): requests
// with their prompt, token budget and arrival step, served over a pool of GPT-2 blocks.
#include "wire/spec_checks.hpp"

namespace course::stage_continuous_batching {

namespace {

using namespace spec;

void check_serve(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  const json& requests = field(input, "input", "requests");
  if (!requests.is_array() || requests.empty() || requests.size() > size_t(kMaxRequests))
    bad("input.requests", "must be a list of 1 to " + std::to_string(kMaxRequests) + " requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string where = at("input.requests", i);
    whole_list(field(requests[i], where, "prompt"), at(where, "prompt"), 0, kInputVocab - 1, 1);
    whole(field(requests[i], where, "max_new_tokens"), at(where, "max_new_tokens"), 1,
          kMaxNewTokens);
    whole(field(requests[i], where, "arrival"), at(where, "arrival"), 0, kMaxArrival);
  }
}

// Each request's tokens and logits; per step, who was prefilled and decoded, and the free
// blocks after it.
void serve_output(const json& output) {
  list_member(output, "output", "requests", [](const json& r, const std::string& where) {
    int_list_member(r, where, "tokens");
    tensor_member(r, where, "logits");
  });
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
