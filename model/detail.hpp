// The toolkit's own access to a Model, for forward(), the variants built on its weights
// (grouped_query.hpp, rotary.hpp, latent.hpp) and `kvc bench`. Not for learners: the
// course asks you to write the attention over your cache yourself, with the helpers in
// ops.hpp.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "gpt2.hpp"
#include "kernels.hpp"

namespace gpt2 {

class ThreadPool;

namespace detail {

// One block's weights. The four Conv1D weights are matrices in either layout
// (kernels.hpp); everything else is a plain vector.
struct LayerWeights {
  const float* ln1_w = nullptr;   // [d_model]
  const float* ln1_b = nullptr;   // [d_model]
  kernels::Matrix attn_w;         // [d_model, 3 d_model]
  const float* attn_b = nullptr;  // [3 d_model]
  kernels::Matrix attn_proj_w;    // [d_model, d_model]
  const float* attn_proj_b = nullptr;
  const float* ln2_w = nullptr;
  const float* ln2_b = nullptr;
  kernels::Matrix fc_w;         // [d_model, 4 d_model]
  const float* fc_b = nullptr;  // [4 d_model]
  kernels::Matrix mlp_proj_w;   // [4 d_model, d_model]
  const float* mlp_proj_b = nullptr;
};

struct Access {
  static ThreadPool& pool(const Model& model);
  // Block `layer`'s weights (checked: ModelError for a bad index).
  static const LayerWeights& layer(const Model& model, int layer);
  // The token embedding, transposed: [d_model, vocab] (column `token` is wte[token]).
  static const kernels::Matrix& wte(const Model& model);
  // The model's WorkCounts, for a variant whose own pieces stand in for embed / qkv /
  // forward: rows added as those would add them.
  static void count_embed(const Model& model, int rows);
  static void count_qkv(const Model& model, int layer, int rows);
  static void count_forward(const Model& model, int rows);
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

// Where each head's numbers are, for causal_attention over any head layout: query row i's
// head h at q + i * q_stride + h * q_head; key and value row j of K/V head g at
// k + j * k_stride + g * k_head (and v likewise); output row i's head h at
// out + i * out_stride + h * out_head. Query head h reads K/V head h / group.
struct HeadLayout {
  int n_head = 0;     // query heads
  int group = 1;      // query heads per K/V head
  int dim = 0;        // length of a query . key dot product
  int value_dim = 0;  // floats of a value row (and of an output head)
  float scale = 0;    // multiplies each finished dot product
  const float* q = nullptr;
  size_t q_stride = 0, q_head = 0;
  const float* k = nullptr;
  size_t k_stride = 0, k_head = 0;
  const float* v = nullptr;
  size_t v_stride = 0, v_head = 0;
  float* out = nullptr;
  size_t out_stride = 0, out_head = 0;
};

// GPT-2's layout: heads of head_dim; q and out rows of d_model; key and value rows of
// kv_stride floats in which query head h reads K/V head h / group; scale
// attention_scale(head_dim).
HeadLayout heads_of(const Config& c, const float* q, const float* k, const float* v,
                    size_t kv_stride, int group, float* out);

// causal_attention for any HeadLayout: query row i (position first_pos + i) attends to
// key rows 0 .. first_pos + i, per head, with the ops.hpp arithmetic (scores[j] =
// dot(q_h, k_j, dim) * scale, softmax, weighted_sum of value_dim floats). Split over the
// model's threads as causal_attention is. GPT-2's causal_attention is this with 12 heads
// of 64, group 1 and rows of d_model.
void causal_attention(const Model& model, const HeadLayout& layout, int first_pos, int n_query);

// The start of every forward(): check_tokens, the tokens counted as forward rows, and
// their positions 0 .. n-1.
std::vector<int> forward_positions(const Model& model, std::span<const int> tokens);

// The end of every forward(): the logits of all n rows of x, [n, vocab].
std::vector<float> all_logits(const Model& model, const float* x, int n);

// x[r] = wte[tokens[r]] (no position: the rotary models' embedding), counted as embed
// rows. Throws ModelError naming `what` for a bad token, before any work.
void embed_tokens(const Model& model, const int* tokens, int n_rows, float* x, const char* what);

// The columns [j0, j0 + n_cols) of a panel-layout matrix as a matrix of their own, in
// place (no copy): the same values, so a product with it gives the bits of those columns
// of a product with `m`. j0 must be a multiple of kernels::PANEL; throws ModelError for a
// matrix kept row-major (real weights mapped as float: a column range of those is not a
// matrix of the kernels' layouts) or a range outside the matrix.
kernels::Matrix column_view(const kernels::Matrix& m, int j0, int n_cols, const char* what);

// scores[j] = dot(q, k + j * stride, dim) * scale for j < n, with gpt2::dot's exact
// arithmetic, several dot products in flight at once.
void attention_scores(const float* q, const float* k, int n, int stride, int dim, float scale,
                      float* scores);

}  // namespace detail
}  // namespace gpt2
