// The known mistakes of stage prefill: its entries of the catalogue (judge/catalogue.hpp), each
// proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_prefill {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"dec.prefill_no_mask", "prefill without a causal mask",
       "attend_causal lets every row attend to the whole prompt, later positions included",
       "mistake-no-causal-mask", 1},
      {"dec.mask_off_by_one", "causal mask off by one",
       "attend_causal lets row i see positions 0 .. i-1 but not itself", "mistake-a-mask-off-by-one", 1},
      {"dec.causal_ignores_cached_past", "mask ignores the cached past",
       "attend_causal numbers its rows from 0 whatever the cache held before them: row r "
       "sees positions 0 .. r", "mistake-a-mask-that-ignores-the-cached-past", 1},
      {"dec.prefill_rows_reversed", "rows appended in reverse",
       "prefill appends the batch's k and v rows last row first", "mistake-rows-appended-in-reverse", 2},
      {"dec.prefill_logits_of_first_row", "logits of the first row",
       "prefill returns the logits of the batch's first row instead of its last", "mistake-the-first-rows-logits", 1},
      {"dec.positions_restart_at_zero", "positions restart at 0",
       "prefill numbers its rows 0, 1, 2, ... whatever the cache already holds", "mistake-positions-that-restart-at-0", 1},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_prefill
