// Stage 7 (paged-cache): the KV cache the way inference servers keep it. Instead of one
// growing buffer per sequence, every sequence's keys and values live in fixed-size blocks
// taken from one shared pool, found through the sequence's block table:
//
//   position p of a sequence  ->  block  table[p / block_size],  offset  p % block_size
//
// Blocks are reference counted, so two sequences can share the blocks of a common past
// (fork) and copy a shared block only when one of them must write into it
// (copy-on-write). Both your code (src/paged.cpp) and the reference implement this header;
// the grader's runner is compiled against it, so leave it as it is.
//
// Shapes: a block holds, for each of the pool's layers, block_size = 16 positions of K and
// of V, 768 floats a position: keys(block, layer) is [block_size, d_model] = [16, 768],
// position offset o at o * 768, head h of it at o * 768 + h * 64.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "course/kvcache.hpp"
#include "gpt2.hpp"

namespace course {

inline constexpr int block_size = 16;  // positions per block

// Thrown when the pool has fewer free blocks than an operation needs. The operation then
// changes nothing: no block is taken, no table or length changes.
struct PoolExhausted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BlockPool {
 public:
  // n_blocks blocks, all free (reference count 0), each holding block_size positions of K
  // and V for each of n_layers layers. Throws std::invalid_argument unless both are >= 1.
  BlockPool(int n_blocks, int n_layers) : n_layers_(n_layers) {
    if (n_blocks < 1 || n_layers < 1)
      throw std::invalid_argument("BlockPool: " + std::to_string(n_blocks) + " blocks of " +
                                  std::to_string(n_layers) + " layers; both must be at least 1");
    const size_t floats = size_t(n_blocks) * size_t(n_layers) * block_size * d_model;
    keys_.assign(floats, 0.0f);
    values_.assign(floats, 0.0f);
    ref_counts_.assign(size_t(n_blocks), 0);
  }

  int n_blocks() const { return int(ref_counts_.size()); }
  int n_layers() const { return n_layers_; }

  // The lowest-numbered free block, now with reference count 1. Throws PoolExhausted when
  // every block is in use.
  int allocate();

  // One more reference to a block in use (a second sequence shares it).
  void retain(int block);

  // One reference fewer; when the count reaches 0 the block is free again. Throws
  // std::logic_error for a block that is already free.
  void release(int block);

  // The block's reference count: 0 when it is free.
  int ref_count(int block) const;

  // How many blocks have reference count 0.
  int free_blocks() const;

  // Block `block`'s storage for layer `layer`: [block_size, d_model]. Given, not graded;
  // throws std::out_of_range for a block or layer that does not exist.
  std::span<float> keys(int block, int layer) { return {keys_.data() + offset(block, layer), per_block}; }
  std::span<float> values(int block, int layer) { return {values_.data() + offset(block, layer), per_block}; }
  std::span<const float> keys(int block, int layer) const {
    return {keys_.data() + offset(block, layer), per_block};
  }
  std::span<const float> values(int block, int layer) const {
    return {values_.data() + offset(block, layer), per_block};
  }

 private:
  static constexpr size_t per_block = size_t(block_size) * d_model;  // floats of one layer's block

  size_t offset(int block, int layer) const {
    if (block < 0 || block >= n_blocks() || layer < 0 || layer >= n_layers_)
      throw std::out_of_range("BlockPool: no block " + std::to_string(block) + ", layer " +
                              std::to_string(layer) + " (" + std::to_string(n_blocks()) +
                              " blocks of " + std::to_string(n_layers_) + " layers)");
    return (size_t(block) * size_t(n_layers_) + size_t(layer)) * per_block;
  }

  int n_layers_ = 0;
  std::vector<float> keys_;      // [n_blocks, n_layers, block_size, d_model]
  std::vector<float> values_;    // [n_blocks, n_layers, block_size, d_model]
  std::vector<int> ref_counts_;  // [n_blocks]; 0 = free
};

// One sequence's cache, in blocks of a pool: every layer's keys and values, positions
// 0 .. length()-1. A sequence can be moved, not copied (a copy would hold the same blocks
// without holding references to them: use fork()). It does not give its blocks back when
// it goes away: release() does.
class PagedSequence {
 public:
  explicit PagedSequence(BlockPool& pool) : pool_(&pool) {}
  PagedSequence(PagedSequence&&) = default;
  PagedSequence& operator=(PagedSequence&&) = default;
  PagedSequence(const PagedSequence&) = delete;
  PagedSequence& operator=(const PagedSequence&) = delete;

  int length() const { return length_; }
  const std::vector<int>& block_table() const { return table_; }  // [ceil(length / 16)]
  BlockPool& pool() const { return *pool_; }

  // Makes room for n more positions (length() grows by n; their contents are written
  // next, layer by layer, with write()). Takes a new block whenever the last one is full.
  // If the last block is partly filled and shared with another sequence, it is first
  // copied into a block of this sequence's own (copy-on-write), because the new positions
  // will be written into it; blocks are taken in position order, that copy before any new
  // block. All or nothing: throws PoolExhausted, changing nothing, when the pool has fewer
  // free blocks than the copy and the new blocks together. Throws std::invalid_argument
  // when n < 0.
  void grow(int n);

  // Stores one position's key and value (768 floats each) for one layer, through the
  // table. 0 <= pos < length(). Throws std::logic_error if that position's block is shared
  // (grow() guarantees the blocks of new positions are not).
  void write(int layer, int pos, std::span<const float> k, std::span<const float> v);

  // The logical [n_heads, seq, head_dim] view of one layer, through the table: head
  // `head`'s 64 floats at position `pos`.
  std::span<const float> key(int layer, int head, int pos) const;
  std::span<const float> value(int layer, int head, int pos) const;

  // A new sequence with the same positions that shares every block (each block's
  // reference count goes up by one). Appending to either later never changes the other.
  PagedSequence fork() const;

  // Gives every block back (one reference each) and leaves the sequence empty.
  void release();

  // Stage 8: an empty sequence starts with shared, full blocks (a cached prefix): each is
  // retained, and length() becomes block_size per block. Given, not graded.
  void adopt(std::span<const int> blocks) {
    if (length_ != 0 || !table_.empty())
      throw std::logic_error("PagedSequence::adopt: the sequence is not empty");
    for (int block : blocks) pool_->retain(block);
    table_.assign(blocks.begin(), blocks.end());
    length_ = int(blocks.size()) * block_size;
  }

 private:
  BlockPool* pool_;
  std::vector<int> table_;  // block ids, in position order
  int length_ = 0;
};

// One layer of a sequence, seen as attention sees a cache (kvcache.hpp's KVView): the
// stage-3 and stage-4 attention functions work on it unchanged.
class PagedLayer : public KVView {
 public:
  PagedLayer(const PagedSequence& sequence, int layer) : sequence_(&sequence), layer_(layer) {}
  int length() const override { return sequence_->length(); }
  std::span<const float> key(int head, int pos) const override { return sequence_->key(layer_, head, pos); }
  std::span<const float> value(int head, int pos) const override {
    return sequence_->value(layer_, head, pos);
  }

 private:
  const PagedSequence* sequence_;
  int layer_;
};

// Stage 3's decode step on a paged sequence: p = sequence.length(); grow(1); embed; per
// layer l: qkv, write(l, p, k, v), attend_one over PagedLayer(sequence, l), finish_block;
// returns the logits: [vocab]. The same bits as decode_step on a ModelCache holding the
// same positions. The sequence's pool must have 12 layers.
std::vector<float> paged_decode_step(const gpt2::Model& model, PagedSequence& sequence, int token);

// Stage 4's prefill on a paged sequence: rows are positions length() + i; grow(n) once,
// then per layer write every row and attend_causal over PagedLayer(sequence, l). Returns
// the last row's logits: [vocab]. `tokens` must not be empty.
std::vector<float> paged_prefill(const gpt2::Model& model, PagedSequence& sequence,
                                 std::span<const int> tokens);

}  // namespace course
