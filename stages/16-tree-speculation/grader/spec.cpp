// The input and output forms of stage tree-speculation's adapters (wire/adapter_spec.hpp):
// a draft tree's parents for the mask probe; a prompt and rounds of draft trees on GPT-2.
#include "wire/spec_checks.hpp"

namespace course::stage_tree_speculation {

namespace {

using namespace spec;

constexpr int64_t kMaxNodes = 64, kMaxRounds = 16;  // as the bindings read them

// A list of parents: -1 or an earlier index each (`valid`), or any whole numbers in a
// range (the error cases: the learner's tree_mask must refuse them).
void check_tree_mask(const json& input) {
  const json& parents = field(input, "input", "parents");
  if (!parents.is_array() || int64_t(parents.size()) > kMaxNodes)
    bad("input.parents",
        "must be a list of at most " + std::to_string(kMaxNodes) + " whole numbers");
  for (size_t i = 0; i < parents.size(); ++i)
    whole(parents[i], at("input.parents", i), -kMaxNodes, kMaxNodes);
}

// {"mask": [n + 1 rows]}, or {"error": type} when the parents are not a tree.
void mask_output(const json& output) {
  if (output.is_object() && output.contains("error")) return string_member(output, "output", "error");
  list_member(output, "output", "mask",
              [](const json& row, const std::string& where) { whole_list(row, where, 0, 1, 0); });
}

void check_tree_speculation(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prompt", "input");
  const json& rounds = field(input, "input", "rounds");
  if (!rounds.is_array() || rounds.empty() || int64_t(rounds.size()) > kMaxRounds)
    bad("input.rounds", "must be a list of 1 to " + std::to_string(kMaxRounds) + " draft trees");
  for (size_t r = 0; r < rounds.size(); ++r) {
    const std::string where = at("input.rounds", r);
    if (!rounds[r].is_array() || int64_t(rounds[r].size()) > kMaxNodes)
      bad(where, "must be a list of at most " + std::to_string(kMaxNodes) + " draft nodes");
    for (size_t i = 0; i < rounds[r].size(); ++i) {
      const std::string node = at(where, i);
      whole(field(rounds[r][i], node, "token"), at(node, "token"), 0, kInputVocab - 1);
      whole(field(rounds[r][i], node, "parent"), at(node, "parent"), -1, int64_t(i) - 1);
    }
  }
}

// Each round's accepted path, tokens and logits; the cache at the end; the work.
void tree_speculation_output(const json& output) {
  list_member(output, "output", "rounds", [](const json& round, const std::string& where) {
    int_list_member(round, where, "path");
    int_list_member(round, where, "tokens");
    tensor_member(round, where, "logits");
  });
  object_member(output, "output", "cache", cache_members);
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_tree_mask", check_tree_mask, mask_output},
      {"run_tree_speculation", check_tree_speculation, tree_speculation_output}};
  return specs;
}

}  // namespace course::stage_tree_speculation
