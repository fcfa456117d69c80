// Your collision-proof prefix cache: stage 17 (prefix-hash).
//
// The declarations, with the exact contract of each function, are in
// include/course/prefix_hash.hpp; read it first. It is stage 8's lookup and insert (without
// eviction) over keys of a few bits only, so that different pasts share keys: a key found
// is a candidate, and a block is reused only when its tokens and its parent block say it is
// the same run of blocks. Everything else is a collision, counted.
//
// Shapes: a block holds block_size = 16 tokens; a prompt's block i is tokens 16i .. 16i+15.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/prefix_hash.hpp"

#include "course/not_implemented.hpp"

namespace course {

HashedPrefixCache::HashedPrefixCache(BlockPool& pool, int bits) : pool_(&pool) {
  // TODO: check bits (std::invalid_argument) and keep it.
  (void)bits;
  not_implemented("HashedPrefixCache::HashedPrefixCache (src/prefix_hash.cpp)");
}

PagedSequence HashedPrefixCache::lookup(std::span<const int> prompt) {
  // TODO: stage 8's walk over weak keys, trusting an entry only when its tokens and its
  // parent block match; a mismatch is a counted collision that ends the walk.
  (void)prompt;
  not_implemented("HashedPrefixCache::lookup (src/prefix_hash.cpp)");
}

void HashedPrefixCache::insert(const PagedSequence& sequence, std::span<const int> tokens) {
  // TODO: remember the sequence's full blocks in order; a key held by the same run of
  // blocks changes nothing, a key held by another run is a counted collision that stops
  // the insert.
  (void)sequence;
  (void)tokens;
  not_implemented("HashedPrefixCache::insert (src/prefix_hash.cpp)");
}

std::vector<HashedBlock> HashedPrefixCache::entries() const {
  // TODO: every remembered block, ordered by pool block.
  not_implemented("HashedPrefixCache::entries (src/prefix_hash.cpp)");
}

}  // namespace course
