// The case builders this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include <cstdint>

#include "gen/cases.hpp"

namespace course::stage_prefix_hash {

// Prompts served through a prefix cache of keys of `bits` bits over a pool of n_blocks
// (run_prefix_hash). The generator proves that every request's logits are Model::forward's
// of its prompt (no block of another past was ever reused), that every layer took one row
// per prompt token not served, and that lookups found at least `least_lookup_collisions`
// colliding keys (what the case says it tests).
CaseSpec hash_case(std::string name, std::string checks, int n_blocks, int bits,
                   std::vector<std::vector<int>> prompts, int least_lookup_collisions);

}  // namespace course::stage_prefix_hash
