// The pieces of the adapters' work rules (judge/adapter_rules.hpp: WorkRules) that several
// stages share: how a call's new positions are said, and what a learner's output says its
// caches gained.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge/adapter_rules.hpp"

namespace course {

// The length of each list of a list of lists ([[1, 2], [3]] -> 2, 1); 0 for an entry that
// is not a list, nothing when `lists` is not a list.
std::vector<int> sizes_of(const json& lists);
// "5 + 3".
std::string joined_sizes(const std::vector<int>& sizes);
// "5 new tokens fed back": every generated token but the last goes through the model.
std::string fed_back_story(const Fixture& fx);
// "6 tokens": the input's "tokens", decoded one at a time (stages one-token, quantized-kv).
std::string tokens_story(const Fixture& fx);
// "6 prefix + 1 + 2 suffix tokens".
std::string saved_prefix_story(const Fixture& fx);
// "work: each layer took 9 rows".
std::string each_layer_took(int64_t rows_per_layer);

// A call that starts from a fresh cache: what it holds at the end is what it gained.
WorkHeld held_by_fresh_cache(const Fixture& fx, const json& actual);
// A saved prefix continued on clones ("continued": each clone's cache_shapes): the prefix
// once, and each continuation's positions after it.
WorkHeld held_past_saved_prefix(const Fixture& fx, const json& actual);
// The note of a saved prefix continued on clones: the prefix rows reused.
std::string saved_prefix_note(const Fixture& fx, int64_t rows_per_layer);

}  // namespace course
