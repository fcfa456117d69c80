// The case builders this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include "gen/cases.hpp"

namespace course::stage_tree_speculation {

// {"token", "parent"}: a draft node.
json draft_node(int token, int parent);

// The prompt prefilled, then one verification per round's draft tree (run_tree_speculation).
// The generator proves that every round's tokens and logits are those of decoding its root
// and accepted tokens one at a time on a plain cache, that the cache at the end is that
// sequential run's, that each round put its root and every node through every layer once,
// and that round k accepts exactly accepted[k] nodes (what the case says it tests).
CaseSpec tree_case(std::string name, std::string checks, std::vector<int> prompt, json rounds,
                   std::vector<int> accepted);

// The mask probe (run_tree_mask) of a tree given by its parents; expect_error: the parents
// are not each -1 or an earlier index, and tree_mask must throw std::invalid_argument.
CaseSpec mask_case(std::string name, std::string checks, std::vector<int> parents,
                   bool expect_error = false);

// The greedy tokens after `prompt`: n of them, the first chosen from the prompt's logits
// (the reference's prefill and decode steps).
std::vector<int> greedy_after(const std::vector<int>& prompt, int n);

// A token id other than `token` (a wrong draft), from a seed.
int other_token(int token, uint32_t seed);

}  // namespace course::stage_tree_speculation
