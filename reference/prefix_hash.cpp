// Reference solution for src/prefix_hash.cpp (stage prefix-hash).
#include "course/prefix_hash.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace course {

HashedPrefixCache::HashedPrefixCache(BlockPool& pool, int bits) : pool_(&pool), bits_(bits) {
  if (bits < 1 || bits > 64)
    throw std::invalid_argument("HashedPrefixCache: bits must be 1 to 64, not " +
                                std::to_string(bits));
}

PagedSequence HashedPrefixCache::lookup(std::span<const int> prompt) {
  PagedSequence sequence(*pool_);
  // Full blocks only, and never the whole prompt: its last token must go through the model.
  const int reusable = prompt.empty() ? 0 : int(prompt.size() - 1) / block_size;
  std::vector<int> table;
  BlockKey parent_key = root_key;
  int parent_block = -1;
  for (int i = 0; i < reusable; ++i) {
    const std::span<const int> tokens = prompt.subspan(size_t(i) * block_size, block_size);
    const BlockKey key = weak_key(parent_key, tokens, bits_);
    const auto it = blocks_.find(key);
    if (it == blocks_.end()) break;  // the run of remembered blocks ends here
    const HashedBlock& entry = it->second;
    const bool same_tokens =
        std::equal(tokens.begin(), tokens.end(), entry.tokens.begin(), entry.tokens.end());
    if (entry.parent != parent_block || !same_tokens) {
      ++lookup_collisions_;  // the key names another past: not this block
      break;
    }
    table.push_back(entry.block);
    parent_key = key;
    parent_block = entry.block;
  }
  sequence.adopt(table);  // retains each block, length = 16 per block
  return sequence;
}

void HashedPrefixCache::insert(const PagedSequence& sequence, std::span<const int> tokens) {
  const std::vector<int>& table = sequence.block_table();
  const int full = sequence.length() / block_size;
  BlockKey parent_key = root_key;
  int parent_block = -1;
  for (int i = 0; i < full; ++i) {
    const std::span<const int> block_tokens = tokens.subspan(size_t(i) * block_size, block_size);
    const BlockKey key = weak_key(parent_key, block_tokens, bits_);
    const int block = table[size_t(i)];
    const auto it = blocks_.find(key);
    if (it == blocks_.end()) {
      pool_->retain(block);
      blocks_.emplace(
          key,
          HashedBlock{key, block, parent_block, i, {block_tokens.begin(), block_tokens.end()}});
      parent_key = key;
      parent_block = block;
      continue;
    }
    const HashedBlock& entry = it->second;
    const bool same_tokens = std::equal(block_tokens.begin(), block_tokens.end(),
                                        entry.tokens.begin(), entry.tokens.end());
    if (entry.parent != parent_block || !same_tokens) {
      ++insert_collisions_;  // the key is another run's: it keeps it
      return;
    }
    parent_key = key;  // the same run: later blocks chain from the remembered one
    parent_block = entry.block;
  }
}

std::vector<HashedBlock> HashedPrefixCache::entries() const {
  std::vector<HashedBlock> out;
  for (const auto& [key, entry] : blocks_) out.push_back(entry);
  std::sort(out.begin(), out.end(),
            [](const HashedBlock& a, const HashedBlock& b) { return a.block < b.block; });
  return out;
}

}  // namespace course
