// Bindings of stage tree-speculation: the tree mask as a probe, and rounds of tree
// verification on GPT-2. Like stages 9, 13 and 15, they call the learner's code
// (course/tree_speculation.hpp) directly: no adapter to write.
//
// run_tree_mask
//   input   {"parents": [p0, p1, ...]}    node i's parent: -1 (the root) or an earlier node
//   output  {"mask": [n + 1 rows of n + 1 zeros and ones]}; a mask of another size comes
//           back as one row of all its bytes, with "mask_bytes" its size
// run_tree_speculation
//   input   {"weights", "prompt": [ids], "rounds": [[{"token", "parent"}, ...], ...]}
//           The prompt is prefilled (stage 4's prefill, yours); its greedy token is the first
//           round's root, and each round's next token the root of the round after it.
//   output  {"rounds": [{"path": [node ids], "tokens": [ids], "logits": [path + 1, vocab]}],
//            "cache": the cache at the end, "work": the rows the rounds put through the model}
#include "runner/bindings.hpp"

#include <algorithm>
#include <string>

#include "course/tree_speculation.hpp"
#include "runner/weights.hpp"

namespace course::stage_tree_speculation {

namespace {

constexpr int kMaxNodes = 64;   // draft nodes in one round
constexpr int kMaxRounds = 16;  // rounds in one case

std::vector<DraftNode> nodes_field(const json& list, const gpt2::Model& model) {
  if (!list.is_array() || list.size() > size_t(kMaxNodes))
    throw BadInput("a round must be a list of at most " + std::to_string(kMaxNodes) +
                   " draft nodes");
  std::vector<DraftNode> nodes;
  for (const json& node : list) {
    if (!node.is_object()) throw BadInput("a draft node must be {\"token\", \"parent\"}");
    DraftNode d;
    d.token = tokens_field(json{{"token", json::array({field(node, "token")})}}, "token", model,
                           false)[0];
    const json& parent = field(node, "parent");
    if (!parent.is_number_integer() || parent.get<int64_t>() < -1 ||
        parent.get<int64_t>() >= int64_t(nodes.size()))
      throw BadInput("a draft node's \"parent\" must be -1 or an earlier node's index");
    d.parent = parent.get<int>();
    nodes.push_back(d);
  }
  return nodes;
}

}  // namespace

void register_adapters(AdapterTable& table) {
  table["run_tree_mask"] = [](const json& input) {
    const json& parents = field(input, "parents");
    if (!parents.is_array() || parents.size() > size_t(kMaxNodes))
      throw BadInput("\"parents\" must be a list of at most " + std::to_string(kMaxNodes) +
                     " whole numbers");
    std::vector<DraftNode> nodes;
    for (const json& p : parents) {
      if (!p.is_number_integer()) throw BadInput("\"parents\" must hold whole numbers");
      nodes.push_back({0, int(std::clamp<int64_t>(p.get<int64_t>(), -1000000, 1000000))});
    }
    const std::vector<uint8_t> mask = tree_mask(nodes);
    const size_t n1 = nodes.size() + 1;
    if (mask.size() != n1 * n1)  // one row of what came back: the comparison shows the count
      return json{{"mask", json::array({std::vector<int>(mask.begin(), mask.end())})},
                  {"mask_bytes", mask.size()}};
    json rows = json::array();
    for (size_t r = 0; r < n1; ++r)
      rows.push_back(std::vector<int>(mask.begin() + std::ptrdiff_t(r * n1),
                                      mask.begin() + std::ptrdiff_t((r + 1) * n1)));
    return json{{"mask", rows}};
  };

  table["run_tree_speculation"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const std::vector<int> prompt = tokens_field(input, "prompt", model, false);
    const json& list = field(input, "rounds");
    if (!list.is_array() || list.empty() || list.size() > size_t(kMaxRounds))
      throw BadInput("\"rounds\" must be a list of 1 to " + std::to_string(kMaxRounds) +
                     " draft trees");
    std::vector<std::vector<DraftNode>> trees;
    for (const json& round : list) trees.push_back(nodes_field(round, model));
    ModelCache cache;
    int root = greedy(prefill(model, cache, prompt));
    model.reset_work();
    json rounds = json::array();
    for (const std::vector<DraftNode>& tree : trees) {
      const TreeVerdict v = verify_tree(model, cache, root, tree);
      rounds.push_back({{"path", v.path},
                        {"tokens", v.tokens},
                        {"logits", logits_json(v.logits, int64_t(v.tokens.size()), true, "row")}});
      if (v.tokens.empty()) throw std::logic_error("verify_tree returned no next token");
      root = v.tokens.back();
    }
    return json{
        {"rounds", rounds}, {"cache", cache_json(cache)}, {"work", work_json(model.work())}};
  };
}

}  // namespace course::stage_tree_speculation
