// The known mistakes of stage continuous-batching: its entries of the catalogue
// (judge/catalogue.hpp), each proved by the .mistake file of the same id in this folder's
// mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_continuous_batching {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"cb.attends_other_sequence", "attends over another sequence",
       "decode_batch attends every row over the first sequence of the batch",
       "mistake-reading-another-sequences-blocks", 1},
      {"cb.positions_from_batch_index", "positions from the batch index",
       "decode_batch takes a row's position from its place in the batch, not from its sequence's length",
       "mistake-positions-from-the-batch", 1},
      {"cb.decodes_finished_request", "a finished request decoded again",
       "a request retires one step late, so it is decoded once more than its budget",
       "mistake-decoding-a-finished-request", 2},
      {"cb.retire_without_release", "finished request keeps its blocks",
       "a finished request leaves the batch without releasing its sequence's blocks",
       "mistake-not-releasing", 2},
      {"cb.admission_ignores_commitments", "admission ignores commitments",
       "admission counts the free blocks of the moment, not those the running sequences will still need",
       "mistake-admission-that-ignores-the-pool", 1},
      {"cb.admission_one_position_more", "admission sizes a request one position too long",
       "admission counts prompt + max_new_tokens positions for a request, one more than it holds (its last token is never fed back), so on a block boundary it waits for a block it will never use",
       "mistake-a-request-one-position-too-long", 1},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_continuous_batching
