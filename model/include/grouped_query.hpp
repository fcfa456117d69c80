// GPT-2 small with grouped-query attention (GQA; multi-query attention, MQA, at one K/V
// head): the 12 query heads share n_kv_heads key/value heads, query head h reading K/V
// head h / (12 / n_kv_heads). A cache then holds n_kv_heads heads per position instead of 12.
//
// The weights are GPT-2's (the base model's, read in place: nothing is copied or made):
// the query is c_attn's 768 query columns as in GPT-2, and K/V head g is GPT-2's key and
// value head g (c_attn's columns 768 + 64g .. 768 + 64g + 63 and 1536 + 64g .. 1536 +
// 64g + 63, biases included). Heads n_kv_heads .. 11 of GPT-2's keys and values are not
// used. With 12 K/V heads this is GPT-2 itself, bit for bit. Every other piece (embedding,
// the rest of a block, the logits) is the base model's. DETERMINISM.md, "Grouped-query
// attention", says which loop each function performs.
//
// Shapes, row-major float32: q [n_rows, d_model] (query head h in columns h*64 ..
// h*64+63); k and v [n_rows, kv_width()] = [n_rows, n_kv_heads * 64] (K/V head g in
// columns g*64 .. g*64+63).
#pragma once

#include <span>
#include <vector>

#include "gpt2.hpp"

namespace gpt2 {

class GroupedQueryModel {
 public:
  // A view of `base` (which must outlive it) with n_kv_heads K/V heads. Throws ModelError
  // unless n_kv_heads divides the base's n_head, or when the base's weights are floats
  // used in place (a real model.safetensors of F32 tensors: its c_attn has no column
  // panels to view; synthetic weights and F16/BF16 files do).
  GroupedQueryModel(const Model& base, int n_kv_heads);

  const Model& base() const { return *base_; }
  const Config& config() const { return base_->config(); }
  int n_kv_heads() const { return n_kv_heads_; }
  // Query heads per K/V head: n_head / n_kv_heads (3 for 4 K/V heads, 12 for MQA).
  int group_size() const { return config().n_head / n_kv_heads_; }
  // The K/V head query head `head` reads: head / group_size().
  int kv_head(int head) const { return head / group_size(); }
  // Floats of one position's keys (and of its values): n_kv_heads * head_dim.
  int kv_width() const { return n_kv_heads_ * config().head_dim; }

  // The base model's embedding: x[r] = wte[tokens[r]] + wpe[positions[r]].
  void embed(const int* tokens, const int* positions, int n_rows, float* x) const;

  // ln_1, then the query (768 columns) and the n_kv_heads K/V heads of c_attn: each
  // output is GPT-2's own column (bias, then the products in order), so q is the base
  // model's q and k, v are the first kv_width() columns of its k and v, bit for bit.
  // x: [n_rows, d_model] (not changed); q: [n_rows, d_model]; k, v: [n_rows, kv_width()].
  // Counted as the base model's qkv(layer) rows.
  void qkv(int layer, const float* x, int n_rows, float* q, float* k, float* v) const;

  // The base model's finish_block and logits (attn: [n_rows, d_model], query head h's
  // output in its 64 columns).
  void finish_block(int layer, const float* attn, int n_rows, float* x) const;
  void logits(const float* x, int n_rows, float* logits) const;

  // Copies shared heads out to one per query head: kv [n_rows, kv_width()] ->
  // out [n_rows, d_model], out's head h = kv's head kv_head(h). No arithmetic.
  void expand_heads(const float* kv, int n_rows, float* out) const;

  // No cache: causal attention over all of `tokens` with the shared heads expanded to 12
  // (expand_heads) and GPT-2's attention: logits of every position, [tokens.size(),
  // vocab]. The ground truth for a grouped cache's decode and prefill.
  std::vector<float> forward(std::span<const int> tokens) const;

 private:
  const Model* base_;
  int n_kv_heads_;
};

}  // namespace gpt2
