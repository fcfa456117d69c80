// Rotary position embeddings (RoPE) for the course: the cos/sin table, the rotation of one
// head's vector by a position, and GPT-2 small with rotary positions instead of learned
// ones (no wpe: position enters only through the rotation of each head's query and key).
//
// The rotation pairs a head's dimensions as (0, 1), (2, 3), ..., (62, 63) ("interleaved":
// the pairing of the RoFormer paper and of Meta's Llama code; Hugging Face's rotate_half
// pairs (i, i + 32) instead). Pair i turns by position * inv_freq(i), inv_freq(i) =
// 10000^(-2i/64). The table of cos and sin is made once, by the course's own routine in
// plain double arithmetic (no libm), and each rotation is four float products and two
// float sums in a fixed order, so a learner who writes it by hand gets the same bits.
// DETERMINISM.md, "Rotary positions", says exactly how.
#pragma once

#include <span>
#include <vector>

#include "gpt2.hpp"

namespace gpt2 {

class RotaryTable {
 public:
  // The table for heads of head_dim floats (even, >= 2) and positions 0 .. max_positions-1
  // (1 .. 2^20). Throws ModelError for other values. About 65,000 cos/sin pairs for 64 and
  // 1024: well under a millisecond.
  explicit RotaryTable(int head_dim = 64, int max_positions = 1024);

  int head_dim() const { return head_dim_; }
  int pairs() const { return head_dim_ / 2; }
  int max_positions() const { return max_positions_; }

  // The frequency of pair i (0 <= i < pairs()): the float nearest 10000^(-2i/head_dim)
  // (1 for pair 0, about 1.33e-4 for pair 31 of 64).
  float inv_freq(int pair) const;
  // cos and sin of position * inv_freq(pair), each the float nearest the exact value but
  // in rare near-ties (DETERMINISM.md). Throws ModelError out of range.
  float cos(int position, int pair) const;
  float sin(int position, int pair) const;

  // Rotates one head's head_dim floats by `position`, pair by pair (x0 = x[2i],
  // x1 = x[2i+1], c = cos(position, i), s = sin(position, i)):
  //   out[2i]   = x0 * c - x1 * s      (two rounded products, then the difference)
  //   out[2i+1] = x0 * s + x1 * c      (two rounded products, then the sum)
  // In place when out == x. Throws ModelError for a position out of range.
  void rotate(const float* x, int position, float* out) const;
  void rotate(float* x, int position) const { rotate(x, position, x); }

 private:
  void check(int position, int pair) const;
  int head_dim_;
  int max_positions_;
  std::vector<float> inv_freq_;  // [pairs]
  std::vector<float> cos_;       // [max_positions, pairs]
  std::vector<float> sin_;       // [max_positions, pairs]
};

// One query head's attention over n key rows and n value rows (row j at keys + j *
// key_stride and values + j * value_stride), the loop of ops.hpp:
//   scores[j] = dot(q, key row j, dim) * attention_scale(dim)      for j = 0 .. n-1
//   softmax(scores, n);  out = weighted_sum(scores, values, n, value_stride, dim)
// For keys that are not where a cache keeps them: a window's keys rotated by their slots
// into a scratch buffer, say. n >= 1; out: dim floats, written, not read.
void attend_rows(const float* q, const float* keys, int key_stride, const float* values,
                 int value_stride, int n, int dim, float* out);

// GPT-2 small with rotary positions: the base model's weights (read in place) without
// wpe; each head of q and k rotated by its row's position (RotaryTable(head_dim, n_ctx)).
class RotaryModel {
 public:
  // A view of `base`, which must outlive it.
  explicit RotaryModel(const Model& base);

  const Model& base() const { return *base_; }
  const Config& config() const { return base_->config(); }
  const RotaryTable& table() const { return table_; }

  // x[r] = wte[tokens[r]]: the token's embedding only, no position.   x: [n_rows, d_model]
  // Counted as the base model's embed rows.
  void embed(const int* tokens, int n_rows, float* x) const;

  // The base model's qkv (ln_1, then c_attn), NOT rotated: q, k, v [n_rows, d_model].
  void qkv(int layer, const float* x, int n_rows, float* q, float* k, float* v) const;

  // Rotates every head of row r by positions[r], in place.   rows: [n_rows, d_model]
  void rotate(float* rows, int n_rows, const int* positions) const;

  // The base model's finish_block and logits.
  void finish_block(int layer, const float* attn, int n_rows, float* x) const;
  void logits(const float* x, int n_rows, float* logits) const;

  // No cache: per layer, qkv of every position, q and k of row i rotated by i, then
  // GPT-2's causal attention; logits of every position, [tokens.size(), vocab]. The ground
  // truth for a rotary cache's decode and prefill (keys cached after rotation).
  std::vector<float> forward(std::span<const int> tokens) const;

  // StreamingLLM with rotary positions taken from the cache: tokens go in one at a time;
  // each layer keeps the keys (NOT rotated) and values of the first `sink` positions and
  // of the last `window`, the oldest other one evicted once sink + window are held. At
  // each step, after the token's own key and value are added, the held rows are slots
  // 0 .. held-1 in position order: the key of slot j is rotated by j, the query by
  // held - 1 (its own slot), and the attention is attend_rows over them. So the positions
  // seen never pass sink + window - 1, and a stream may be longer than n_ctx. Logits of
  // every token, [tokens.size(), vocab]. While fewer than sink + window tokens have gone
  // in, slots are positions and this equals forward(). Throws ModelError unless sink >= 0,
  // window >= 1, sink + window <= n_ctx and every token is a valid id.
  std::vector<float> forward_streaming(std::span<const int> tokens, int sink, int window) const;

 private:
  const Model* base_;
  RotaryTable table_;
};

}  // namespace gpt2
