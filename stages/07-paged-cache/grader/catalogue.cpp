// The known mistakes of stage paged-cache: its entries of the catalogue (judge/catalogue.hpp), each
// proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_paged_cache {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"pg.no_copy_on_write", "no copy-on-write",
       "grow never copies a shared, partly filled last block, so a fork writes into a block its sibling still reads",
       "mistake-no-copy-on-write", 1},
      {"pg.new_block_one_early", "new block one position early",
       "grow counts one position too many when it sizes the block table: 15 positions already take a second block",
       "mistake-off-by-one-at-the-block-boundary", 1},
      {"pg.release_leaks_blocks", "release leaks blocks",
       "release() gives back only the last block of the table; the others stay allocated",
       "mistake-leaking-blocks-on-release", 2},
      {"pg.release_frees_shared", "release frees shared blocks",
       "BlockPool::release frees a block outright while other sequences still hold it",
       "mistake-freeing-a-shared-block", 1},
      {"pg.contiguous_table", "blocks assumed contiguous",
       "key(), value() and write() use block table_[0] + pos / 16, as if a sequence's blocks were consecutive in the pool",
       "mistake-assuming-the-blocks-are-contiguous", 1},
      {"pg.grow_check_forgets_copy", "all or nothing, but the copy is not counted",
       "a grow that needs a copy-on-write block and new blocks, in a pool that lacks one of them, takes "
       "the copy and then throws PoolExhausted, so the sequence's table and the counts change: grow's "
       "check counts the new blocks but not the copy, or grow takes its blocks one by one with no check first",
       "mistake-a-check-that-forgets-the-copy", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_paged_cache
