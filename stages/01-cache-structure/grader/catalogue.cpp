// The known mistakes of stage cache-structure: its entries of the catalogue (judge/catalogue.hpp),
// each proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_cache_structure {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"kvc.transposed_layout", "transposed layout",
       "key(h, p) and value(h, p) read the position-major [seq, 768] buffer as if it were "
       "head-major, at (h * seq + p) * 64", "mistake-transposed-layout", 1},
      {"kvc.off_by_one_growth", "append adds two positions",
       "append() stores the new position twice, so the cache grows by 2", "mistake-off-by-one-growth", 2},
      {"kvc.kv_swapped", "keys and values swapped",
       "the keys read back are the values appended and the values the keys: append(k, v) "
       "stores k among the values and v among the keys, or key() reads values_ and value() "
       "reads keys_", "mistake-keys-and-values-swapped", 2},
      {"kvc.key_transposed", "key() transposed, value() right",
       "key(h, p) reads the buffer at (h * seq + p) * 64 as if it were head-major; value() "
       "reads it right", "mistake-one-sided-key-or-value", 1},
      {"kvc.value_reads_keys", "the values read back are the keys",
       "the values read back are the keys appended: value(h, p) reads keys_, or append(k, v) "
       "stores k among the values too", "mistake-one-sided-key-or-value", 3},
      {"kvc.rows_reversed", "positions read in reverse",
       "position 0 reads the last row appended: key(h, p) and value(h, p) count positions from "
       "the newest, or append() puts each new row in front of the others", "mistake-rows-in-reverse-order", 1},
      {"kvc.clone_loses_length", "clone loses the length",
       "clone() copies the stored rows but gives the copy length 0", "mistake-a-clone-that-loses-its-length", 2},
      {"kvc.snapshot_position_major", "snapshot in [seq, 12, 64] order",
       "the adapter copies the snapshot position by position (for p, then for h) instead of "
       "head by head (for h, then for p); key() and value() are right", "mistake-the-snapshot-in-another-order", 1},
      {"kvc.snapshot_shape_order", "snapshot shape fields out of order",
       "the adapter's snapshot shape is {length, 12, 64} instead of {12, length, 64}", "mistake-the-snapshot-in-another-order", 3},
      {"kvc.clone_copies_last_cache", "clone copies the newest cache",
       "the adapter's clone step copies the cache created last instead of cache op.cache",
       "mistake-routing-to-the-wrong-cache", 2},
      {"kvc.append_to_last_cache", "appends go to the newest cache",
       "the adapter's append step appends to the cache created last instead of cache op.cache",
       "mistake-routing-to-the-wrong-cache", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_cache_structure
