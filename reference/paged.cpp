// Reference solution for src/paged.cpp (stage paged-cache).
#include "course/paged.hpp"

#include <algorithm>

#include "course/decode.hpp"

namespace course {

namespace {

void check_block(const BlockPool& pool, int block, const char* what) {
  if (block < 0 || block >= pool.n_blocks())
    throw std::out_of_range(std::string(what) + ": no block " + std::to_string(block) + " in a pool of " +
                            std::to_string(pool.n_blocks()));
}

// Blocks needed to hold n positions.
int blocks_for(int n) { return (n + block_size - 1) / block_size; }

}  // namespace

// ---- BlockPool -------------------------------------------------------------------------

int BlockPool::allocate() {
  // The lowest-numbered free block: which block a sequence gets is then fixed by the order
  // of operations alone, so two correct implementations build the same tables.
  for (int b = 0; b < n_blocks(); ++b) {
    if (ref_counts_[size_t(b)] == 0) {
      ref_counts_[size_t(b)] = 1;
      return b;
    }
  }
  throw PoolExhausted("BlockPool: all " + std::to_string(n_blocks()) + " blocks are in use");
}

void BlockPool::retain(int block) {
  check_block(*this, block, "BlockPool::retain");
  if (ref_counts_[size_t(block)] == 0)
    throw std::logic_error("BlockPool::retain: block " + std::to_string(block) + " is free");
  ++ref_counts_[size_t(block)];
}

void BlockPool::release(int block) {
  check_block(*this, block, "BlockPool::release");
  if (ref_counts_[size_t(block)] == 0)
    throw std::logic_error("BlockPool::release: block " + std::to_string(block) + " is already free");
  --ref_counts_[size_t(block)];  // free again only when no sequence holds it any more
}

int BlockPool::ref_count(int block) const {
  check_block(*this, block, "BlockPool::ref_count");
  return ref_counts_[size_t(block)];
}

int BlockPool::free_blocks() const {
  return int(std::count(ref_counts_.begin(), ref_counts_.end(), 0));
}

// ---- PagedSequence ---------------------------------------------------------------------

void PagedSequence::grow(int n) {
  if (n < 0) throw std::invalid_argument("PagedSequence::grow: n = " + std::to_string(n));
  const int used = length_ % block_size;  // positions filled in the last block (0: it is full)
  const bool copy_last = used != 0 && pool_->ref_count(table_.back()) > 1 && n > 0;
  const int fresh = blocks_for(length_ + n) - int(table_.size());
  const int needed = fresh + (copy_last ? 1 : 0);
  // Check first, so that running out changes nothing.
  if (needed > pool_->free_blocks())
    throw PoolExhausted("PagedSequence::grow(" + std::to_string(n) + "): needs " + std::to_string(needed) +
                        " free blocks, the pool has " + std::to_string(pool_->free_blocks()));
  if (copy_last) {
    // Copy-on-write: the new positions go into the last block, which another sequence
    // also reads. Give this sequence its own copy of the filled part first.
    const int shared = table_.back();
    const int own = pool_->allocate();
    for (int l = 0; l < pool_->n_layers(); ++l) {
      const size_t filled = size_t(used) * d_model;
      std::copy_n(pool_->keys(shared, l).begin(), filled, pool_->keys(own, l).begin());
      std::copy_n(pool_->values(shared, l).begin(), filled, pool_->values(own, l).begin());
    }
    pool_->release(shared);
    table_.back() = own;
  }
  for (int i = 0; i < fresh; ++i) table_.push_back(pool_->allocate());
  length_ += n;
}

void PagedSequence::write(int layer, int pos, std::span<const float> k, std::span<const float> v) {
  if (pos < 0 || pos >= length_)
    throw std::out_of_range("PagedSequence::write: position " + std::to_string(pos) + " of a sequence of " +
                            std::to_string(length_));
  if (k.size() != size_t(d_model) || v.size() != size_t(d_model))
    throw std::invalid_argument("PagedSequence::write takes 768 floats of K and 768 of V");
  const int block = table_[size_t(pos / block_size)];
  if (pool_->ref_count(block) != 1)
    throw std::logic_error("PagedSequence::write: position " + std::to_string(pos) + " is in block " +
                           std::to_string(block) + ", which is shared");
  const size_t offset = size_t(pos % block_size) * d_model;
  std::copy(k.begin(), k.end(), pool_->keys(block, layer).begin() + std::ptrdiff_t(offset));
  std::copy(v.begin(), v.end(), pool_->values(block, layer).begin() + std::ptrdiff_t(offset));
}

std::span<const float> PagedSequence::key(int layer, int head, int pos) const {
  // Position pos: block table_[pos / 16], row pos % 16 of it, head `head`'s 64 floats.
  const BlockPool& pool = *pool_;
  return pool.keys(table_.at(size_t(pos / block_size)), layer)
      .subspan(size_t(pos % block_size) * d_model + size_t(head) * head_dim, head_dim);
}

std::span<const float> PagedSequence::value(int layer, int head, int pos) const {
  const BlockPool& pool = *pool_;
  return pool.values(table_.at(size_t(pos / block_size)), layer)
      .subspan(size_t(pos % block_size) * d_model + size_t(head) * head_dim, head_dim);
}

PagedSequence PagedSequence::fork() const {
  PagedSequence copy(*pool_);
  for (int block : table_) pool_->retain(block);  // shared, not copied
  copy.table_ = table_;
  copy.length_ = length_;
  return copy;
}

void PagedSequence::release() {
  for (int block : table_) pool_->release(block);
  table_.clear();
  length_ = 0;
}

// ---- GPT-2 on a paged sequence ---------------------------------------------------------

std::vector<float> paged_decode_step(const gpt2::Model& model, PagedSequence& sequence, int token) {
  return paged_prefill(model, sequence, std::span<const int>(&token, 1));
}

std::vector<float> paged_prefill(const gpt2::Model& model, PagedSequence& sequence, std::span<const int> tokens) {
  if (tokens.empty()) throw std::invalid_argument("paged_prefill: no tokens");
  if (sequence.pool().n_layers() != n_layers)
    throw std::invalid_argument("paged_prefill: the pool holds " + std::to_string(sequence.pool().n_layers()) +
                                " layers, GPT-2 small has 12");
  const int n = int(tokens.size());
  const int past = sequence.length();
  std::vector<int> positions(size_t(n), 0);  // [n]
  for (int i = 0; i < n; ++i) positions[size_t(i)] = past + i;
  const size_t rows = size_t(n) * d_model;
  std::vector<float> x(rows), q(rows), k(rows), v(rows), attn(rows);  // [n, d_model] each
  model.embed(tokens.data(), positions.data(), n, x.data());            // checks the token ids
  sequence.grow(n);  // every layer's slots for the n new positions, before any layer runs
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), n, q.data(), k.data(), v.data());
    for (int i = 0; i < n; ++i)
      sequence.write(l, past + i, std::span<const float>(k).subspan(size_t(i) * d_model, d_model),
                     std::span<const float>(v).subspan(size_t(i) * d_model, d_model));
    attend_causal(q, n, PagedLayer(sequence, l), attn);
    model.finish_block(l, attn.data(), n, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab] of the last row
  model.logits(x.data() + size_t(n - 1) * d_model, 1, logits.data());
  return logits;
}

}  // namespace course
