// The known mistakes of stage rollback: its entries of the catalogue (judge/catalogue.hpp), each
// proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_rollback {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"rb.crop_keeps_last", "crop keeps the last n",
       "KVCache::crop(n) erases positions from the front and keeps the last n, not the first n",
       "mistake-keeping-the-last-n", 1},
      {"rb.crop_one_layer", "crop in layer 0 only",
       "ModelCache::crop crops layer 0; the other eleven layers keep the rejected positions",
       "mistake-cropping-one-layer", 3},
      {"rb.crop_keeps_stale_rows", "crop keeps the stale rows",
       "KVCache::crop lowers the length but leaves the rows in the buffers, so the next append lands after the rejected ones",
       "mistake-a-length-that-forgets-rows-that-remember", 1},
      {"rb.speculate_on_shared_copy", "speculation on a shared copy",
       "run_speculative speculates on a copy that shares the prompt's layers, so cropping and decoding change the prompt's cache too: it copies the ModelCache instead of calling clone(), or ModelCache::clone() copies the layer pointers",
       "mistake-cropping-the-original", 2},
      {"rb.crop_accepted_off_by_one", "crop one short",
       "a round crops to n + accepted - 1, dropping the last accepted draft token as well",
       "mistake-off-by-one-at-the-accepted-length", 2},
      {"rb.crop_last_cache", "crops go to the newest cache",
       "the adapter's crop step crops the cache created last instead of cache op.cache",
       "mistake-cropping-the-wrong-cache", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_rollback
