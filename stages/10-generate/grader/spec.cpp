// The input forms of stage generate's adapters (wire/adapter_spec.hpp): greedy generation
// from a prompt (run_generate), and from a saved prefix's clones (run_generate_from).
#include <algorithm>

#include "wire/spec_checks.hpp"

namespace course::stage_generate {

namespace {

using namespace spec;

void check_generate(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prompt", "input");
  check_new_tokens(input, int64_t(input["prompt"].size()));
}

void check_generate_from(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prefix", "input");
  check_token_lists(input, "suffixes");
  const json& suffixes = input["suffixes"];
  if (suffixes.size() > size_t(kMaxRequests))
    bad("input.suffixes",
        "must be a list of 1 to " + std::to_string(kMaxRequests) + " token lists");
  size_t longest = 0;
  for (const json& s : suffixes) longest = std::max(longest, s.size());
  check_new_tokens(input, int64_t(input["prefix"].size() + longest));
}

// The tokens, as returned and as streamed; the cache, the logits of every step; the work.
void generate_output(const json& output) {
  int_list_member(output, "output", "tokens");
  int_list_member(output, "output", "streamed");
  gpt2_run_output(output);
}

// Each continuation's tokens, cache and logits; the saved cache; the work.
void generate_from_output(const json& output) {
  list_member(output, "output", "continued", [](const json& c, const std::string& where) {
    int_list_member(c, where, "tokens");
    cache_members(c, where);
    tensor_member(c, where, "logits");
  });
  object_member(output, "output", "saved", cache_members);
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_generate", check_generate, generate_output},
      {"run_generate_from", check_generate_from, generate_from_output},
  };
  return specs;
}

}  // namespace course::stage_generate
