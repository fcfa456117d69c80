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

// Each request's served tokens and logits; the prefix cache's entries and evictions (keys
// as 16 hex digits); the pool; the work.
void trace_output(const json& output) {
  list_member(output, "output", "requests", [](const json& r, const std::string& where) {
    int_member(r, where, "cached_tokens");
    tensor_member(r, where, "logits");
  });
  list_member(output, "output", "entries", [](const json& e, const std::string& where) {
    string_member(e, where, "key");
    int_member(e, where, "block");
    int_member(e, where, "depth");
    int_member(e, where, "last_used");
  });
  string_list_member(output, "output", "evicted");
  int_list_member(output, "output", "ref_counts");
  int_member(output, "output", "free_blocks");
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_prefix_trace", check_prefix_trace, trace_output}};
  return specs;
}

}  // namespace course::stage_prefix_cache
