// GPT-2 small with multi-head latent attention (MLA, DeepSeek-V2's attention), for a cache
// that holds one 192-float row per position and layer instead of 12 heads of keys and
// values (1536 floats).
//
// Per position, from the layer-normed input h (rotations by the position p, RotaryTable):
//   c       = 128 floats, the latent: a down-projection of h
//   k_rope  = 64 floats, one rotary key shared by every head, rotated by p
//   the cached row = [c ; k_rope]                                   (192 floats)
// and per head h (12 of them):
//   q_nope_h (64), q_rope_h (64, rotated by p)                      the query's two parts
//   k_h = [W_uk_h^T c ; k_rope]   v_h = W_uv_h^T c                  keys and values, 128 and 64
//   score(j) = (q_nope_h . W_uk_h^T c_j + q_rope_h . k_rope_j) * scale,  scale = 1/sqrt(128)
// where W_uk_h and W_uv_h are head h's [128, 64] slices of two up-projections [128, 768].
//
// The course computes the score in the ABSORBED order: W_uk_h folded into the query once
// (q_latent_h = W_uk_h q_nope_h, 128 floats), then one dot product of the absorbed query
// [q_latent_h ; q_rope_h] with the cached row [c_j ; k_rope_j], 192 terms in order; and
// the values likewise: the softmax-weighted sum of the cached latents c_j first (128
// floats per head), then W_uv_h^T once. Nothing per head is ever expanded per position.
// The expanded order (keys and values per head and position, then GPT-2's attention) is
// the same in exact arithmetic and not in floats: expand_keys, expand_values and
// forward_expanded compute it, to show the difference. DETERMINISM.md, "Latent attention",
// gives every loop.
//
// Weights: the query and the projections to the cached row are columns of GPT-2's c_attn
// (the base model's, read in place, biases included): q_nope its 768 query columns,
// q_rope its 768 key columns, c the first 128 of its value columns and k_rope the next 64.
// The up-projections W_uk and W_uv are new, generated from a seed by the synthetic
// weights' formula (synthetic.hpp) when the model is made. Everything after attention
// (c_proj, the MLP, the logits) and the token embedding are GPT-2's; there is no wpe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpt2.hpp"
#include "rotary.hpp"

namespace gpt2 {

class LatentModel {
 public:
  static constexpr int LATENT = 128;  // floats of c
  // k_rope, q_rope_h and q_nope_h have head_dim floats (64); a cached row LATENT + head_dim.

  // The base model (which must outlive this one) with up-projections made from `seed`:
  // W_uk of layer l is the synthetic matrix [128, d_model] of tensor id 1000 + 2l, W_uv
  // that of id 1001 + 2l (synthetic.hpp's formula, kind "matrix": sd 0.02, bfloat16
  // values). Throws ModelError when the base's shape leaves no room for the row in
  // c_attn's value columns (d_model < 128 + head_dim) or its weights are floats used in
  // place (F32 safetensors).
  LatentModel(const Model& base, uint64_t seed);
  LatentModel(LatentModel&&) noexcept;
  LatentModel& operator=(LatentModel&&) noexcept;
  ~LatentModel();

  const Model& base() const { return *base_; }
  const Config& config() const { return base_->config(); }
  const RotaryTable& table() const { return table_; }
  uint64_t seed() const { return seed_; }

  int latent_dim() const { return LATENT; }
  int rope_dim() const { return config().head_dim; }
  // Floats of one cached row, [c ; k_rope]: 192.
  int row_dim() const { return LATENT + rope_dim(); }
  // Floats of one head's absorbed query, [q_latent_h ; q_rope_h]: also 192.
  int query_dim() const { return LATENT + rope_dim(); }
  // 1/sqrt(128) (attention_scale of a key's 64 + 64 floats), correctly rounded:
  // 0.0883883461f. Not a power of two: scaling the query instead of the score changes bits.
  float scale() const;

  // x[r] = wte[tokens[r]], no position.  x: [n_rows, d_model]. Counted as embed rows.
  void embed(const int* tokens, int n_rows, float* x) const;

  // ln_1, then one product with c_attn's first 2 d_model + 192 columns (each output
  // GPT-2's own sum: bias, then the products in order), split and rotated by positions[r]:
  //   q_nope [n_rows, d_model]   head h in columns h*64 .. h*64+63
  //   q_rope [n_rows, d_model]   head h likewise, each head rotated
  //   rows   [n_rows, row_dim()] [c ; k_rope], k_rope rotated: what the cache keeps
  // Counted as the base model's qkv(layer) rows.
  void project(int layer, const float* x, const int* positions, int n_rows, float* q_nope,
               float* q_rope, float* rows) const;

  // The absorbed queries: q [n_rows, n_head, query_dim()], head h of row r =
  //   [ q_latent_h ; q_rope_h ],  q_latent_h[t] = sum over d = 0..63 in order, from 0, of
  //                               q_nope_h[d] * W_uk[t][h*64 + d]
  void absorb_query(int layer, const float* q_nope, const float* q_rope, int n_rows,
                    float* q) const;

  // The attention's output from each head's weighted latent:
  //   o [n_rows, n_head, 128] -> attn [n_rows, d_model], head h of row r =
  //   attn[h*64 + d] = sum over t = 0..127 in order, from 0, of o_h[t] * W_uv[t][h*64 + d]
  void output_from_latent(int layer, const float* o, int n_rows, float* attn) const;

  // The expanded order (not the course's): from cached rows [n_rows, row_dim()],
  //   keys   [n_rows, n_head, 128]: head h = [ W_uk_h^T c ; k_rope ],
  //          (W_uk_h^T c)[d] = sum over t = 0..127 in order, from 0, of c[t] * W_uk[t][h*64+d]
  //   values [n_rows, d_model]:     head h = W_uv_h^T c, the same loop over W_uv
  void expand_keys(int layer, const float* rows, int n_rows, float* keys) const;
  void expand_values(int layer, const float* rows, int n_rows, float* values) const;

  // The base model's finish_block and logits.
  void finish_block(int layer, const float* attn, int n_rows, float* x) const;
  void logits(const float* x, int n_rows, float* logits) const;

  // No cache, the absorbed order: per layer, project every position (row i at position
  // i), absorb_query, then for each head h and query i, over rows j = 0 .. i:
  //   score[j] = dot(q_h, row_j, 192) * scale();  softmax;
  //   o_h = weighted_sum(score, rows' c, i + 1, row_dim(), 128)
  // then output_from_latent and finish_block. Logits of every position, [tokens.size(),
  // vocab]: the ground truth for a latent cache's decode and prefill.
  std::vector<float> forward(std::span<const int> tokens) const;

  // The same model in the expanded order: keys and values expanded per head and position
  // (expand_keys, expand_values), each head's query [q_nope_h ; q_rope_h] (128 floats),
  // and GPT-2's attention over them (dot of 128 terms, times scale(); the weighted sum of
  // the 64-float values). Other bits than forward(): not the course's numbers.
  std::vector<float> forward_expanded(std::span<const int> tokens) const;

 private:
  struct Layer;
  const Model* base_;
  uint64_t seed_;
  RotaryTable table_;
  std::vector<uint16_t> storage_;  // every layer's W_uk, W_uk per head transposed, W_uv
  std::vector<Layer> layers_;
};

}  // namespace gpt2
