// Stage 17 (prefix-hash): stage 8's prefix cache with keys that can collide. vLLM names a
// cached block by a hash of its parent's hash and its own tokens. Stage 8 trusted the key:
// equal keys meant equal tokens. A hash only makes that likely; with a short or weak hash,
// or an attacker choosing prompts, two different pasts can share a key, and a cache that
// trusts it serves one request another request's keys and values (vLLM's advisory
// GHSA-rm76-4mrf-v9r8 was such a case: its prefix hash could be made to collide).
//
// Here the key is deliberately weak: the top `bits` bits of stage 8's block_key. A key
// found is only a candidate. A block is reused when it is the same block run, checked:
// its tokens equal the prompt's tokens at that place, and its parent is the block reused
// just before it (for block 0: it has none). A key that leads to anything else is a
// collision: it is counted, and the cache behaves as if the key had not been found there.
//
// Both your code (src/prefix_hash.cpp) and the reference implement this header; leave it as
// it is.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "course/prefix_cache.hpp"  // BlockKey, root_key, block_key, BlockPool, PagedSequence

namespace course {

// block_key(parent, tokens) cut to its top `bits` bits, 1 <= bits <= 64 (64: the whole
// key). The top bits, because FNV-1a's low bits depend only on the low bits of what went
// in. The parent of a prompt's block 0 is root_key; of block i, block i-1's weak key.
// Given, not graded.
inline BlockKey weak_key(BlockKey parent, std::span<const int> tokens, int bits) {
  const BlockKey key = block_key(parent, tokens);
  return bits >= 64 ? key : key >> (64 - bits);
}

// One remembered block.
struct HashedBlock {
  BlockKey key = 0;         // its weak key
  int block = 0;            // where it is in the pool
  int parent = -1;          // the pool block of the prompt's block before it; -1 for block 0
  int depth = 0;            // its place in its prompt: tokens 16*depth .. 16*depth + 15
  std::vector<int> tokens;  // its block_size tokens
};

class HashedPrefixCache {
 public:
  // Throws std::invalid_argument unless 1 <= bits <= 64.
  HashedPrefixCache(BlockPool& pool, int bits);

  // A new sequence holding the longest run of remembered blocks that begins `prompt`, as in
  // stage 8 (full blocks only, at most (prompt.size() - 1) / 16 of them). Block i is reused
  // when an entry is remembered under weak_key(key of block i-1, tokens 16i .. 16i+15) (root_key
  // for i = 0) AND that entry is the same block run: its tokens are those tokens and its
  // parent is the block reused as block i-1 (-1 for i = 0). An entry under the key that
  // fails the check is a collision: lookup_collisions() grows by one and the run ends
  // there, as when no entry is found. Each reused block is retained for the sequence
  // (PagedSequence::adopt). The sequence's length() is the prompt tokens served.
  PagedSequence lookup(std::span<const int> prompt);

  // Remembers the full blocks of `sequence`, in order from block 0, whose `tokens` are the
  // sequence's (at least length() of them). Block i, under its weak key chained as in
  // lookup(), with "the block before" starting at -1:
  //   - no entry has the key: the block is remembered (the cache retains it), its parent
  //     being the block before; it becomes the block before;
  //   - the entry is the same block run (its tokens are block i's and its parent is the
  //     block before): nothing changes, and the entry's block becomes the block before. This
  //     is a block lookup() reused, or one computed again because the prompt's last token
  //     had to be (the same tokens after the same blocks: the same bits);
  //   - the entry is another run: a collision. insert_collisions() grows by one, the old
  //     entry stays, and insert stops there (no later block could be reached through it).
  void insert(const PagedSequence& sequence, std::span<const int> tokens);

  // What the cache remembers, ordered by pool block.
  std::vector<HashedBlock> entries() const;

  int64_t lookup_collisions() const { return lookup_collisions_; }
  int64_t insert_collisions() const { return insert_collisions_; }

 private:
  BlockPool* pool_;
  int bits_ = 64;
  std::map<BlockKey, HashedBlock> blocks_;  // by weak key
  int64_t lookup_collisions_ = 0;
  int64_t insert_collisions_ = 0;
};

}  // namespace course
