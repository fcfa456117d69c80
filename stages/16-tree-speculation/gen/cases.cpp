// Cases of stage tree-speculation: the tree mask of chains, of branching trees and of no
// nodes, and parents that are not earlier nodes; then draft trees verified on GPT-2 small
// after a prompt, built from the model's own greedy continuation so that each round
// accepts as many nodes as the case says: a whole chain, none, a path down the second
// branch, the lowest of two siblings with the same token, an empty tree, and rounds in a
// row whose caches are compacted each time.
#include "course/tree_speculation.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "tree_cases.hpp"
#include "wire/adapter_spec.hpp"

namespace course::stage_tree_speculation {

json draft_node(int token, int parent) { return {{"token", token}, {"parent", parent}}; }

int other_token(int token, uint32_t seed) {
  const int t = words(seed, 1)[0];
  return t == token ? (t + 1) % kInputVocab : t;
}

std::vector<int> greedy_after(const std::vector<int>& prompt, int n) {
  const gpt2::Model& model = model_for(decode_weights_spec());
  ModelCache cache;
  std::vector<int> out = {greedy(prefill(model, cache, prompt))};
  while (int(out.size()) < n) out.push_back(greedy(decode_step(model, cache, out.back())));
  return out;
}

CaseSpec tree_case(std::string name, std::string checks, std::vector<int> prompt, json rounds,
                   std::vector<int> accepted) {
  json input = {{"weights", decode_weights_spec()}, {"prompt", prompt}, {"rounds", rounds}};
  auto finalize = [prompt, rounds, accepted](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    require(out.at("rounds").size() == accepted.size(), "one record per round");
    // The same tokens decoded one at a time on a plain cache.
    ModelCache cache;
    int root = greedy(prefill(model, cache, prompt));
    int64_t rows = 0;
    for (size_t k = 0; k < accepted.size(); ++k) {
      const json& r = out["rounds"][k];
      const std::vector<int> path = r.at("path").get<std::vector<int>>();
      const std::vector<int> tokens = r.at("tokens").get<std::vector<int>>();
      require(int(path.size()) == accepted[k],
              "round " + std::to_string(k) + " accepts as many nodes as the case says");
      require(tokens.size() == path.size() + 1, "a token per accepted node, and the next");
      const Tensor logits = tensor_from_json(r.at("logits"));
      std::vector<int> fed = {root};
      for (size_t j = 0; j < path.size(); ++j) {
        require(rounds[k][size_t(path[j])]["token"] == tokens[j],
                "an accepted node's token is the path's");
        fed.push_back(tokens[j]);
      }
      for (size_t j = 0; j < fed.size(); ++j) {
        const std::vector<float> step = decode_step(model, cache, fed[j]);
        require(same_bits(step, logits.data.data() + j * vocab, vocab),
                "round " + std::to_string(k) + "'s logits row " + std::to_string(j) +
                    " is decoding the root and the path one token at a time");
        require(greedy(step) == tokens[j], "each token is greedy of the row before it");
      }
      root = tokens.back();
      rows += 1 + int64_t(rounds[k].size());
    }
    require_same_cache(out.at("cache"), cache_json(cache),
                       "the cache at the end is the sequential run's");
    require_work(out.at("work"), rows);
    json expected = out;
    for (json& r : expected["rounds"]) r["logits"] = digest_logits(r["logits"]);
    expected["cache"] = digest_cache(out["cache"]);
    expected["work"] = expected_work(out["work"]);
    return expected;
  };
  return {"tree-speculation",     std::move(name), std::move(checks),
          "run_tree_speculation", input,           finalize};
}

CaseSpec mask_case(std::string name, std::string checks, std::vector<int> parents,
                   bool expect_error) {
  CaseSpec spec{"tree-speculation", std::move(name),        std::move(checks),
                "run_tree_mask",    {{"parents", parents}}, nullptr};
  spec.expect_error = expect_error;
  return spec;
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(mask_case("01-mask-of-a-chain",
                            "A chain of 4 nodes: each row sees the root and every row above it.",
                            {-1, 0, 1, 2}));
  cases.push_back(
      mask_case("02-mask-of-a-tree",
                "Three children of the root with children of their own: a row sees the root, its "
                "ancestors and itself, never a sibling's subtree.",
                {-1, -1, 0, 0, 1, 3, 3, -1}));
  cases.push_back(
      mask_case("03-mask-of-no-nodes", "No draft nodes: the mask is the root seeing itself.", {}));
  cases.push_back(mask_case(
      "04-a-parent-after-its-child-throws",
      "Node 1's parent is node 2, not an earlier node: std::invalid_argument.", {-1, 2, 0}, true));
  cases.push_back(mask_case("05-a-parent-below-minus-one-throws",
                            "A parent of -2 is no node: std::invalid_argument.", {-2}, true));

  const std::vector<int> prompt = words(61, 12);
  const std::vector<int> g = greedy_after(prompt, 16);  // g[0] is round 0's root
  auto w = [&](size_t at, uint32_t seed) { return other_token(g[at], seed); };
  cases.push_back(tree_case(
      "06-a-chain-accepted-whole",
      "A chain of 3 drafts, each the model's own next token: all 3 accepted, and the "
      "fourth token comes from the last one's logits.",
      prompt,
      json::array({json::array({draft_node(g[1], -1), draft_node(g[2], 0), draft_node(g[3], 1)})}),
      {3}));
  cases.push_back(tree_case(
      "07-a-chain-rejected-at-once",
      "A chain whose first draft is wrong: nothing accepted, the next token is the root's "
      "greedy choice, and the cache keeps the root alone.",
      prompt, json::array({json::array({draft_node(w(1, 71), -1), draft_node(g[2], 0)})}), {0}));
  cases.push_back(tree_case(
      "08-the-second-branch",
      "Two branches below the root, the wrong one first: the path goes down the second (nodes 2, "
      "4, 5), whose rows "
      "sit at depths 1 to 3 and never see the first branch.",
      prompt,
      json::array(
          {json::array({draft_node(w(1, 72), -1), draft_node(w(2, 73), 0), draft_node(g[1], -1),
                        draft_node(w(2, 74), 2), draft_node(g[2], 2), draft_node(g[3], 4)})}),
      {3}));
  cases.push_back(tree_case("09-siblings-with-the-same-token",
                            "Nodes 0 and 2 both hold the right token: node 0, the lower index, is "
                            "accepted, and its wrong child ends the "
                            "walk, though node 2's child was right.",
                            prompt,
                            json::array({json::array({draft_node(g[1], -1), draft_node(w(2, 75), 0),
                                                      draft_node(g[1], -1), draft_node(g[2], 2)})}),
                            {1}));
  cases.push_back(tree_case(
      "10-rounds-in-a-row",
      "Four rounds: an empty tree (one decode step), a wide tree accepting 2, a chain accepting 1, "
      "and a tree "
      "accepting 2 down its last branch; the cache is compacted after each.",
      prompt,
      json::array(
          {json::array(),
           json::array({draft_node(w(2, 76), -1), draft_node(w(2, 77), -1), draft_node(g[2], -1),
                        draft_node(w(3, 78), 0), draft_node(w(4, 79), 2), draft_node(g[3], 2)}),
           json::array({draft_node(g[5], -1), draft_node(w(6, 80), 0)}),
           json::array({draft_node(w(7, 81), -1), draft_node(w(8, 82), 0), draft_node(g[7], -1),
                        draft_node(g[8], 2), draft_node(w(9, 83), 3)})}),
      {0, 2, 1, 2}));
  return cases;
}

}  // namespace course::stage_tree_speculation
