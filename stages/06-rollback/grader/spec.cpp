// The input form of stage rollback's speculative adapter (wire/adapter_spec.hpp): a prompt,
// then rounds of draft tokens, how many were accepted, and the token that follows them.
#include "wire/spec_checks.hpp"

namespace course::stage_rollback {

namespace {

using namespace spec;

void check_speculative(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prompt", "input");
  const json& rounds = field(input, "input", "rounds");
  if (!rounds.is_array() || rounds.empty()) bad("input.rounds", "must be a non-empty list");
  for (size_t i = 0; i < rounds.size(); ++i) {
    const std::string where = at("input.rounds", i);
    const json& draft = field(rounds[i], where, "draft");
    whole_list(draft, at(where, "draft"), 0, kInputVocab - 1, 0);
    whole(field(rounds[i], where, "accepted"), at(where, "accepted"), 0, int64_t(draft.size()));
    whole(field(rounds[i], where, "next"), at(where, "next"), 0, kInputVocab - 1);
  }
}

// The prompt's cache, the speculating cache, and each round's next-token logits.
void speculative_output(const json& output) {
  object_member(output, "output", "prompt_cache", cache_members);
  object_member(output, "output", "cache", cache_members);
  tensor_member(output, "output", "logits");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_speculative", check_speculative, speculative_output}};
  return specs;
}

}  // namespace course::stage_rollback
