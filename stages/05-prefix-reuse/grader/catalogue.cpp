// The known mistakes of stage prefix-reuse: its entries of the catalogue (judge/catalogue.hpp),
// each proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_prefix_reuse {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"dec.reuse_mutates_saved", "continuing on the saved cache itself",
       "the suffix is appended to the saved prefix itself: continue_from copies the saved "
       "ModelCache (its copy constructor or assignment shares the layers) instead of calling "
       "clone(), or ModelCache::clone() copies the layer pointers", "mistake-reusing-without-a-clone", 2},
      {"dec.continue_from_empty_cache", "continuing from an empty cache",
       "the suffix is prefilled into an empty cache, leaving the prefix out: continue_from "
       "starts from a new ModelCache, or ModelCache::clone() returns an empty one",
       "mistake-continuing-from-an-empty-cache", 2},
      {"dec.continue_from_previous", "continuing from the previous continuation",
       "run_prefix_reuse continues each suffix from the previous continuation instead of from "
       "the saved prefix", "mistake-continuing-from-the-previous-continuation", 2},
      {"dec.continuation_recomputes_prefix", "prefix recomputed",
       "run_prefix_reuse computes each continuation as a fresh save_prefix of prefix + suffix: "
       "the right numbers, with the prefix through the model again each time", "mistake-recomputing-the-prefix", 2},
      {"dec.saved_rows_read_from_continuation", "saved rows read from the continuation",
       "run_prefix_reuse records the continuation's shape rows where the saved cache's belong",
       "mistake-the-saved-rows-read-from-the-wrong-cache", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_prefix_reuse
