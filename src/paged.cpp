// Your paged cache: stage 7 (paged-cache).
//
// The declarations are in include/course/paged.hpp; read them first. The storage is given:
//
//   BlockPool      keys_, values_  [n_blocks, n_layers, block_size, d_model]
//                  ref_counts_     [n_blocks]   0 = free
//                  keys(b, l) / values(b, l)    block b's [16, 768] rows of layer l
//   PagedSequence  table_          [ceil(length / 16)]   block ids in position order
//                  length_         positions held
//
// What you write is the bookkeeping: which block holds which position, who shares a
// block, when a block is copied, when it is free again. Then stage 3's decode step and
// stage 4's prefill on top of it, through PagedLayer (attention reads the blocks through
// the table and never learns they are blocks).
//
// This file leaves out eviction and prefix sharing across requests (stage 8) and running
// several sequences in one batch (stage 9).
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/not_implemented.hpp"
#include "course/paged.hpp"

namespace course {

// ---- BlockPool -------------------------------------------------------------------------

int BlockPool::allocate() {
  // TODO: find the lowest-numbered block with ref_counts_ 0, set its count to 1 and return
  // it; throw PoolExhausted when there is none.
  not_implemented("BlockPool::allocate (src/paged.cpp)");
}

void BlockPool::retain(int block) {
  // TODO: one more reference to `block` (std::logic_error if it is free).
  (void)block;
  not_implemented("BlockPool::retain (src/paged.cpp)");
}

void BlockPool::release(int block) {
  // TODO: one reference fewer (std::logic_error if it is already free); at 0 it is free.
  (void)block;
  not_implemented("BlockPool::release (src/paged.cpp)");
}

int BlockPool::ref_count(int block) const {
  // TODO: the block's reference count (std::out_of_range for a block that does not exist).
  (void)block;
  not_implemented("BlockPool::ref_count (src/paged.cpp)");
}

int BlockPool::free_blocks() const {
  // TODO: how many blocks have reference count 0.
  not_implemented("BlockPool::free_blocks (src/paged.cpp)");
}

// ---- PagedSequence ---------------------------------------------------------------------

void PagedSequence::grow(int n) {
  // TODO: count the blocks needed (new blocks for positions past the last full block, plus
  // one if the last block is partly filled and shared: copy-on-write), throw PoolExhausted
  // before changing anything if the pool has fewer free; then copy the shared last block's
  // filled rows (every layer) into a block of your own and release the shared one, allocate
  // the new blocks, and add n to length_.
  (void)n;
  not_implemented("PagedSequence::grow (src/paged.cpp)");
}

void PagedSequence::write(int layer, int pos, std::span<const float> k, std::span<const float> v) {
  // TODO: block table_[pos / 16], row pos % 16 of it: copy k and v there for `layer`.
  (void)layer;
  (void)pos;
  (void)k;
  (void)v;
  not_implemented("PagedSequence::write (src/paged.cpp)");
}

std::span<const float> PagedSequence::key(int layer, int head, int pos) const {
  // TODO: head `head`'s 64 floats in row pos % 16 of block table_[pos / 16], layer `layer`.
  (void)layer;
  (void)head;
  (void)pos;
  not_implemented("PagedSequence::key (src/paged.cpp)");
}

std::span<const float> PagedSequence::value(int layer, int head, int pos) const {
  // TODO: as key(), from the pool's values.
  (void)layer;
  (void)head;
  (void)pos;
  not_implemented("PagedSequence::value (src/paged.cpp)");
}

PagedSequence PagedSequence::fork() const {
  // TODO: a new sequence on the same pool with the same table and length; retain every block.
  not_implemented("PagedSequence::fork (src/paged.cpp)");
}

void PagedSequence::release() {
  // TODO: release every block of the table, then empty the table and set the length to 0.
  not_implemented("PagedSequence::release (src/paged.cpp)");
}

// ---- GPT-2 on a paged sequence ---------------------------------------------------------

std::vector<float> paged_decode_step(const gpt2::Model& model, PagedSequence& sequence, int token) {
  // x, q, k, v, attn: [1, d_model]    logits: [vocab]
  // TODO: stage 3's decode step with p = sequence.length(): grow(1) before the layers,
  // write(l, p, k, v) instead of append, attend_one over PagedLayer(sequence, l).
  (void)model;
  (void)sequence;
  (void)token;
  not_implemented("paged_decode_step (src/paged.cpp)");
}

std::vector<float> paged_prefill(const gpt2::Model& model, PagedSequence& sequence,
                                 std::span<const int> tokens) {
  // positions: [n]    x, q, k, v, attn: [n, d_model]    logits: [vocab]
  // TODO: stage 4's prefill with rows at positions length() + i: grow(n) once, then per
  // layer write every row and attend_causal over PagedLayer(sequence, l).
  (void)model;
  (void)sequence;
  (void)tokens;
  not_implemented("paged_prefill (src/paged.cpp)");
}

}  // namespace course
