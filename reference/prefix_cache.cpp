// Reference solution for src/prefix_cache.cpp (stage prefix-cache).
#include "course/prefix_cache.hpp"

#include <algorithm>
#include <string>

namespace course {

PagedSequence PrefixCache::lookup(std::span<const int> prompt) {
  ++request_;
  PagedSequence sequence(*pool_);
  // Full blocks only, and never the whole prompt: its last token must go through the model.
  const int reusable = prompt.empty() ? 0 : int(prompt.size() - 1) / block_size;
  std::vector<int> table;
  BlockKey parent = root_key;
  for (int i = 0; i < reusable; ++i) {
    const BlockKey key = block_key(parent, prompt.subspan(size_t(i) * block_size, block_size));
    auto it = blocks_.find(key);
    if (it == blocks_.end()) break;  // the run of cached blocks ends here
    it->second.last_used = request_;
    table.push_back(it->second.block);
    parent = key;
  }
  sequence.adopt(table);  // retains each block, length = 16 per block
  return sequence;
}

void PrefixCache::make_room(int n) {
  std::vector<const CachedBlock*> unused;  // cached blocks no sequence holds
  for (const auto& [key, entry] : blocks_)
    if (pool_->ref_count(entry.block) == 1) unused.push_back(&entry);
  if (pool_->free_blocks() + int(unused.size()) < n)
    throw PoolExhausted("PrefixCache::make_room(" + std::to_string(n) + "): " + std::to_string(pool_->free_blocks()) +
                        " free and " + std::to_string(unused.size()) + " evictable blocks");
  // Least recently used first; among blocks of one request, the deepest first.
  std::sort(unused.begin(), unused.end(), [](const CachedBlock* a, const CachedBlock* b) {
    if (a->last_used != b->last_used) return a->last_used < b->last_used;
    if (a->depth != b->depth) return a->depth > b->depth;
    return a->block < b->block;
  });
  std::vector<BlockKey> evict;
  for (const CachedBlock* entry : unused) {
    if (pool_->free_blocks() + int(evict.size()) >= n) break;
    evict.push_back(entry->key);
  }
  for (BlockKey key : evict) {
    pool_->release(blocks_.at(key).block);
    blocks_.erase(key);
    evicted_.push_back(key);
  }
}

void PrefixCache::insert(const PagedSequence& sequence, std::span<const int> tokens) {
  const int full = sequence.length() / block_size;
  if (int(tokens.size()) < full * block_size)
    throw std::invalid_argument("PrefixCache::insert: fewer tokens than the sequence's full blocks hold");
  BlockKey parent = root_key;
  for (int i = 0; i < full; ++i) {
    const BlockKey key = block_key(parent, tokens.subspan(size_t(i) * block_size, block_size));
    const int block = sequence.block_table()[size_t(i)];
    auto it = blocks_.find(key);
    if (it == blocks_.end()) {
      pool_->retain(block);  // the cache's own reference: the block outlives the request
      it = blocks_.emplace(key, CachedBlock{key, block, i, request_}).first;
    }
    it->second.last_used = request_;
    parent = key;
  }
}

std::vector<CachedBlock> PrefixCache::entries() const {
  std::vector<CachedBlock> out;
  for (const auto& [key, entry] : blocks_) out.push_back(entry);
  std::sort(out.begin(), out.end(), [](const CachedBlock& a, const CachedBlock& b) { return a.block < b.block; });
  return out;
}

}  // namespace course
