// The known mistakes of stage prefix-cache: its entries of the catalogue (judge/catalogue.hpp),
// each proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_prefix_cache {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"pc.key_without_parent", "block key without its parent",
       "each block is keyed by its own 16 tokens only, so equal blocks after different pasts collide",
       "mistake-a-key-of-the-blocks-own-tokens", 1},
      {"pc.cache_partial_block", "partial block cached",
       "insert() also caches the sequence's last, partly filled block under the tokens it holds so far",
       "mistake-reusing-a-partly-filled-block", 1},
      {"pc.evict_lowest_block", "wrong eviction order",
       "make_room evicts in block id order instead of least recently used, deepest first",
       "mistake-the-wrong-eviction-order", 2},
      {"pc.recompute_cached", "cached prefix recomputed",
       "the trace computes every prompt in full on a fresh sequence: the right logits, with the cached positions through the model again",
       "mistake-counting-reused-positions-as-computed", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_prefix_cache
