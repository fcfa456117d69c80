// Your prefix cache: stage 8 (prefix-cache).
//
// The declarations are in include/course/prefix_cache.hpp; read them first. The state is
// given:
//
//   blocks_    key -> CachedBlock {key, block, depth, last_used}   what the cache remembers
//   evicted_   keys, in the order they were evicted
//   request_   the current request's number: lookup() starts a new one
//
// A block is found by its key, block_key(parent's key, its 16 tokens), and the cache holds
// one reference to every block it remembers (pool_->retain when it adds one,
// pool_->release when it evicts one). This file leaves out sequences that grow after their
// prompt (a server would insert their decoded blocks too) and sharing partly filled blocks.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/not_implemented.hpp"
#include "course/prefix_cache.hpp"

namespace course {

PagedSequence PrefixCache::lookup(std::span<const int> prompt) {
  // table: [n_reused] block ids of the cached run, then sequence.adopt(table)
  // TODO: a new request; a sequence holding the longest run of the prompt's leading full
  // blocks the cache knows (never the block of its last token), each counted as used now.
  (void)prompt;
  not_implemented("PrefixCache::lookup (src/prefix_cache.cpp)");
}

void PrefixCache::make_room(int n) {
  // TODO: at least n free blocks, by evicting blocks no request holds: least recently
  // used first, then the deepest; PoolExhausted, and nothing evicted, if that cannot be done.
  (void)n;
  not_implemented("PrefixCache::make_room (src/prefix_cache.cpp)");
}

void PrefixCache::insert(const PagedSequence& sequence, std::span<const int> tokens) {
  // TODO: remember every full block of the sequence under its chained key (a new one with
  // the cache's own reference); every full block counts as used by the current request.
  (void)sequence;
  (void)tokens;
  not_implemented("PrefixCache::insert (src/prefix_cache.cpp)");
}

std::vector<CachedBlock> PrefixCache::entries() const {
  // TODO: every remembered block, ordered by block id.
  not_implemented("PrefixCache::entries (src/prefix_cache.cpp)");
}

}  // namespace course
