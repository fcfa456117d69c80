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
    bad("input.suffixes", "must be a list of 1 to " + std::to_string(kMaxRequests) + " token lists");
  size_t longest = 0;
  for (const json& s : suffixes) longest = std::max(longest, s.size());
  check_new_tokens(input, int64_t(input["prefix"].size() + longest));
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_generate", check_generate},
      {"run_generate_from", check_generate_from},
  };
  return specs;
}

}  // namespace course::stage_generate
