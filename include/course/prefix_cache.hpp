// Stage 8 (prefix-cache): prompt blocks shared across requests, found by content, evicted
// when the pool runs short. Stage 5 reused one saved prefix by hand; a server does it for
// every request: each full block of a prompt is remembered under a key that names its
// tokens and everything before them, and a later request whose prompt begins the same way
// takes those blocks instead of computing them again. Both your code (src/prefix_cache.cpp)
// and the reference implement this header; leave it as it is.
//
// Reference counts: the cache holds one reference to every block it remembers, and every
// sequence using the block holds one more. A cached block with count 1 is used by no
// request: it may be evicted (its key forgotten, its reference released) when blocks run
// short.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "course/paged.hpp"

namespace course {

using BlockKey = uint64_t;

// The parent key of a prompt's first block.
inline constexpr BlockKey root_key = 0xcbf29ce484222325ull;

// The key of a full block: FNV-1a 64 over the parent block's key (8 bytes, little-endian)
// and then the block's block_size token ids (4 bytes each, little-endian). Because the
// parent's key went into it, equal keys mean equal tokens from the start of the prompt to
// the end of this block, not only within it. Given, not graded.
inline BlockKey block_key(BlockKey parent, std::span<const int> tokens) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t bytes, int n) {
    for (int i = 0; i < n; ++i) {
      h ^= (bytes >> (8 * i)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  };
  mix(parent, 8);
  for (int t : tokens) mix(uint32_t(t), 4);
  return h;
}

// One remembered block.
struct CachedBlock {
  BlockKey key = 0;
  int block = 0;           // where it is in the pool
  int depth = 0;           // its place in its prompt: block `depth` covers tokens 16*depth ..
  int64_t last_used = 0;   // the number of the last request that looked it up or inserted it
};

class PrefixCache {
 public:
  explicit PrefixCache(BlockPool& pool) : pool_(&pool) {}

  // Starts a request (requests are numbered 1, 2, ... in the order of their lookups).
  // Returns a new sequence holding the longest run of cached blocks that begins `prompt`:
  // block i is reused if block_key(key of block i-1, tokens 16i .. 16i+15) is cached, for
  // i = 0, 1, ... while it is, with root_key as the parent of block 0. Only full blocks
  // count, and at most (prompt.size() - 1) / 16 of them, so that at least one prompt token
  // is left to compute (its logits are the request's answer). Each reused block is
  // retained for the sequence and marked used by this request. The sequence's length() is
  // the number of prompt tokens served from the cache.
  PagedSequence lookup(std::span<const int> prompt);

  // Makes sure the pool has at least n free blocks, evicting cached blocks no sequence uses
  // (reference count 1): least recently used first, and among blocks last used by the same
  // request the deepest first (so a prompt's later blocks go before the ones they extend).
  // Evicting forgets the key, releases the cache's reference and appends the key to
  // evicted(). Throws PoolExhausted, evicting nothing, if evicting every unused cached
  // block would still leave fewer than n free.
  void make_room(int n);

  // Remembers every full block of `sequence` not cached yet. `tokens` are the sequence's
  // tokens (at least length() of them): block i's key chains from block i-1's as in
  // lookup(). The cache retains each block it adds; every full block of the sequence, new
  // or not, is marked used by the current request.
  void insert(const PagedSequence& sequence, std::span<const int> tokens);

  // What the cache remembers, ordered by block id.
  std::vector<CachedBlock> entries() const;

  // Every evicted key, in the order of eviction.
  const std::vector<BlockKey>& evicted() const { return evicted_; }

 private:
  BlockPool* pool_;
  std::map<BlockKey, CachedBlock> blocks_;  // by key
  std::vector<BlockKey> evicted_;
  int64_t request_ = 0;  // the current request's number (0 before the first lookup)
};

}  // namespace course
