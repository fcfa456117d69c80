// The toolkit's own access to a Model, for forward() and `kvc bench`. Not for learners:
// the course asks you to write the attention over your cache yourself, with the helpers
// in ops.hpp.
#pragma once

#include <memory>
#include <span>

#include "gpt2.hpp"

namespace gpt2 {

class ThreadPool;

namespace detail {

struct Access {
  static ThreadPool& pool(const Model& model);
  // The weight memory the model owns, in bytes (synthetic weights: all of them, blocks
  // first in layer order, then ln_f, wte transposed, wpe; matrices as bfloat16 panels).
  static std::span<const unsigned char> owned_weights(const Model& model);
  // A model whose weights are a mapped file's synthetic arena (matrices as bfloat16
  // panels); the model keeps `mapping` alive (synthetic_file.hpp).
  static Model on_mapped_weights(const Config& config, std::shared_ptr<void> mapping,
                                 const unsigned char* arena);
};

// Causal self-attention of n_query query rows at positions first_pos .. first_pos+n_query-1
// against the keys and values of positions 0 .. first_pos+n_query-1, per head, with
// exactly the arithmetic of the ops.hpp helpers (dot * scale, softmax, weighted_sum), so
// the bits equal those of the hand-written loop in ops.hpp. Work is split over
// (head, query) pairs on the model's threads; with 4 queries or more, over (head, block
// of 64 queries) pairs, a block's scores computed as one matrix product (kernels::matmul,
// each score still gpt2::dot's sum).
//   q:   [n_query, d_model]
//   k,v: [first_pos + n_query, d_model]
//   out: [n_query, d_model]
void causal_attention(const Model& model, const float* q, const float* k, const float* v,
                      int first_pos, int n_query, float* out);

// scores[j] = dot(q, k + j * stride, dim) * scale for j < n, with gpt2::dot's exact
// arithmetic, several dot products in flight at once.
void attention_scores(const float* q, const float* k, int n, int stride, int dim, float scale,
                      float* scores);

}  // namespace detail
}  // namespace gpt2
