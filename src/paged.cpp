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
  // TODO: the lowest-numbered free block, now with count 1; PoolExhausted when none is free.
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
  // TODO: room for n more positions (length grows by n); a shared, partly filled last
  // block is never written into (copy-on-write); all or nothing: PoolExhausted leaves the
  // table, the length and every count as they were.
  (void)n;
  not_implemented("PagedSequence::grow (src/paged.cpp)");
}

void PagedSequence::write(int layer, int pos, std::span<const float> k, std::span<const float> v) {
  // TODO: store k and v as layer `layer`'s key and value at position `pos`, through the table.
  (void)layer;
  (void)pos;
  (void)k;
  (void)v;
  not_implemented("PagedSequence::write (src/paged.cpp)");
}

std::span<const float> PagedSequence::key(int layer, int head, int pos) const {
  // TODO: head `head`'s 64 floats at position `pos` of layer `layer`, found through the table.
  (void)layer;
  (void)head;
  (void)pos;
  not_implemented("PagedSequence::key (src/paged.cpp)");
}

std::span<const float> PagedSequence::value(int layer, int head, int pos) const {
  // TODO: as key(), for the values.
  (void)layer;
  (void)head;
  (void)pos;
  not_implemented("PagedSequence::value (src/paged.cpp)");
}

PagedSequence PagedSequence::fork() const {
  // TODO: a sequence on the same pool sharing this one's blocks, table and length (each
  // block one reference more); nothing is copied.
  not_implemented("PagedSequence::fork (src/paged.cpp)");
}

void PagedSequence::release() {
  // TODO: give up this sequence's reference to each of its blocks once; it is left empty.
  not_implemented("PagedSequence::release (src/paged.cpp)");
}

// ---- GPT-2 on a paged sequence ---------------------------------------------------------

std::vector<float> paged_decode_step(const gpt2::Model& model, PagedSequence& sequence, int token) {
  // x, q, k, v, attn: [1, d_model]    logits: [vocab]
  // TODO: stage 3's decode step on a paged sequence: the same bits, one position more in
  // every layer.
  (void)model;
  (void)sequence;
  (void)token;
  not_implemented("paged_decode_step (src/paged.cpp)");
}

std::vector<float> paged_prefill(const gpt2::Model& model, PagedSequence& sequence,
                                 std::span<const int> tokens) {
  // positions: [n]    x, q, k, v, attn: [n, d_model]    logits: [vocab]
  // TODO: stage 4's prefill on a paged sequence: the same bits, n positions more in every layer.
  (void)model;
  (void)sequence;
  (void)tokens;
  not_implemented("paged_prefill (src/paged.cpp)");
}

}  // namespace course
