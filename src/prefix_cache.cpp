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
  // TODO: a new request (++request_); walk the prompt's full blocks (at most
  // (prompt.size() - 1) / 16) chaining keys from root_key, stop at the first key not in
  // blocks_, mark each found block last_used = request_, and return a sequence adopting them.
  (void)prompt;
  not_implemented("PrefixCache::lookup (src/prefix_cache.cpp)");
}

void PrefixCache::make_room(int n) {
  // TODO: if free + evictable (cached blocks with ref_count 1) < n, throw PoolExhausted;
  // otherwise evict the evictable blocks in order (smallest last_used, then largest depth)
  // until n are free: release the block, erase the key, record it in evicted_.
  (void)n;
  not_implemented("PrefixCache::make_room (src/prefix_cache.cpp)");
}

void PrefixCache::insert(const PagedSequence& sequence, std::span<const int> tokens) {
  // TODO: for each full block i of the sequence, key = block_key(previous key, tokens of
  // block i); if the key is new, retain the block and remember {key, block, i, request_};
  // either way mark it last_used = request_.
  (void)sequence;
  (void)tokens;
  not_implemented("PrefixCache::insert (src/prefix_cache.cpp)");
}

std::vector<CachedBlock> PrefixCache::entries() const {
  // TODO: every remembered block, ordered by block id.
  not_implemented("PrefixCache::entries (src/prefix_cache.cpp)");
}

}  // namespace course
