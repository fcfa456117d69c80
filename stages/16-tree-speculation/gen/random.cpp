// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp), in two kinds
// that take turns:
//   0. a random tree's mask: 1 to 12 nodes, each parent -1 or a random earlier node;
//   1. a random prompt, then one to three rounds, each a tree grown around a path of the
//      model's own greedy tokens (0 to 3 deep): wrong siblings before each path node (with
//      children of their own now and then), now and then a later sibling of the path's last
//      node with the same token and the right next token below it (the lowest index wins),
//      and wrong children below the path's end.
#include "gen/draw.hpp"
#include "tree_cases.hpp"

namespace course::stage_tree_speculation {

using namespace draws;

namespace {

CaseSpec random_mask(Draw& d, const std::string& name) {
  std::vector<int> parents;
  for (int i = 0, n = d.between(1, 12); i < n; ++i) parents.push_back(d.between(-1, i - 1));
  return mask_case(
      name, "The mask of a random tree of " + plural(int(parents.size()), "node", "nodes") + ".",
      parents);
}

CaseSpec random_rounds(Draw& d, const std::string& name) {
  const std::vector<int> prompt = d.tokens(d.between(4, 16));
  const int n_rounds = d.between(1, 3);
  const std::vector<int> g = greedy_after(prompt, 4 * n_rounds + 1);
  json rounds = json::array();
  std::vector<int> accepted;
  size_t at = 0;  // g[at] is this round's root
  for (int k = 0; k < n_rounds; ++k) {
    const int depth = d.between(0, 3);
    json nodes = json::array();
    int parent = -1;
    for (int step = 0; step < depth; ++step) {
      const int right = g[at + size_t(step) + 1];
      for (int s = d.between(0, 2); s > 0; --s) {
        nodes.push_back(draft_node(other_token(right, uint32_t(d.next())), parent));
        if (d.chance(40)) nodes.push_back(draft_node(d.token(), int(nodes.size()) - 1));
      }
      nodes.push_back(draft_node(right, parent));
      const int on_path = int(nodes.size()) - 1;
      if (step == depth - 1 && d.chance(50)) {
        // A later sibling with the same token, whose child is the model's next token: the
        // walk must not follow it, since the lower index comes first.
        nodes.push_back(draft_node(right, parent));
        nodes.push_back(draft_node(g[at + size_t(depth) + 1], int(nodes.size()) - 1));
      }
      parent = on_path;
    }
    for (int s = d.between(0, 2); s > 0; --s)
      nodes.push_back(
          draft_node(other_token(g[at + size_t(depth) + 1], uint32_t(d.next())), parent));
    rounds.push_back(nodes);
    accepted.push_back(depth);
    at += size_t(depth) + 1;
  }
  return tree_case(name,
                   "A random prompt of " + std::to_string(prompt.size()) + " tokens and " +
                       plural(n_rounds, "round", "rounds") +
                       " of random trees around the model's own tokens: " +
                       "each round's path, tokens and logits as decoded one at a time, and the "
                       "cache at the end.",
                   prompt, rounds, accepted);
}

}  // namespace

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "tree-speculation", i);
    cases.push_back(i % 2 == 0 ? random_mask(d, case_name(seed, i, "mask"))
                               : random_rounds(d, case_name(seed, i, "rounds")));
  }
  return cases;
}

}  // namespace course::stage_tree_speculation
