// GroupedQueryModel: GPT-2's weights with fewer K/V heads (grouped_query.hpp).
#include "grouped_query.hpp"

#include <cstring>
#include <string>

#include "detail.hpp"
#include "kernels.hpp"
#include "threads.hpp"

namespace gpt2 {

GroupedQueryModel::GroupedQueryModel(const Model& base, int n_kv_heads)
    : base_(&base), n_kv_heads_(n_kv_heads) {
  const Config& c = base.config();
  if (n_kv_heads < 1 || n_kv_heads > c.n_head || c.n_head % n_kv_heads != 0) {
    throw ModelError("grouped-query: " + std::to_string(n_kv_heads) +
                     " K/V heads do not divide the " + std::to_string(c.n_head) + " query heads");
  }
  // c_attn's key and value columns start at d_model and 2 d_model: panel boundaries when
  // d_model is a multiple of the panel width (GPT-2 small: 768 = 24 panels).
  if (c.d_model % kernels::PANEL != 0)
    throw ModelError("grouped-query: d_model " + std::to_string(c.d_model) +
                     " is not a multiple of the kernels' panel width (" +
                     std::to_string(kernels::PANEL) + ")");
  for (int l = 0; l < c.n_layer; ++l)
    detail::column_view(detail::Access::layer(base, l).attn_w, c.d_model, kv_width(),
                        "grouped-query");
}

void GroupedQueryModel::embed(const int* tokens, const int* positions, int n_rows, float* x) const {
  base_->embed(tokens, positions, n_rows, x);
}

void GroupedQueryModel::qkv(int layer, const float* x, int n_rows, float* q, float* k,
                            float* v) const {
  const Config& c = config();
  const detail::LayerWeights& lw = detail::Access::layer(*base_, layer);
  if (n_rows < 0) throw ModelError("grouped-query qkv: n_rows " + std::to_string(n_rows) + " < 0");
  if (n_rows == 0) return;
  detail::Access::count_qkv(*base_, layer, n_rows);
  ThreadPool* pool = &detail::Access::pool(*base_);
  const int d = c.d_model, kv = kv_width();
  thread_local std::vector<float> h;
  h.resize(static_cast<size_t>(n_rows) * d);  // [n_rows, d_model]
  kernels::layer_norm_rows(x, lw.ln1_w, lw.ln1_b, n_rows, d, h.data(), pool);
  // Three products over column ranges of c_attn, each column GPT-2's own sum.
  const kernels::Matrix wq = detail::column_view(lw.attn_w, 0, d, "grouped-query");
  const kernels::Matrix wk = detail::column_view(lw.attn_w, d, kv, "grouped-query");
  const kernels::Matrix wv = detail::column_view(lw.attn_w, 2 * d, kv, "grouped-query");
  kernels::matmul(h.data(), n_rows, wq, lw.attn_b, q, kernels::Epilogue::store, pool);
  kernels::matmul(h.data(), n_rows, wk, lw.attn_b + d, k, kernels::Epilogue::store, pool);
  kernels::matmul(h.data(), n_rows, wv, lw.attn_b + 2 * d, v, kernels::Epilogue::store, pool);
}

void GroupedQueryModel::finish_block(int layer, const float* attn, int n_rows, float* x) const {
  base_->finish_block(layer, attn, n_rows, x);
}

void GroupedQueryModel::logits(const float* x, int n_rows, float* logits) const {
  base_->logits(x, n_rows, logits);
}

void GroupedQueryModel::expand_heads(const float* kv, int n_rows, float* out) const {
  const Config& c = config();
  const size_t hd = static_cast<size_t>(c.head_dim), w = static_cast<size_t>(kv_width());
  for (int r = 0; r < n_rows; ++r) {
    for (int h = 0; h < c.n_head; ++h) {
      std::memcpy(out + static_cast<size_t>(r) * c.d_model + h * hd,
                  kv + static_cast<size_t>(r) * w + kv_head(h) * hd, hd * sizeof(float));
    }
  }
}

std::vector<float> GroupedQueryModel::forward(std::span<const int> tokens) const {
  const Config& c = config();
  const std::vector<int> positions = detail::forward_positions(*base_, tokens);
  const int n = static_cast<int>(tokens.size());
  if (n == 0) return {};
  const size_t d = static_cast<size_t>(c.d_model), w = static_cast<size_t>(kv_width());
  std::vector<float> x(n * d), q(n * d), attn(n * d);  // [n, d_model]
  std::vector<float> k(n * w), v(n * w);               // [n, kv_width]: the shared heads
  std::vector<float> k12(n * d), v12(n * d);           // [n, d_model]: one head per query head
  embed(tokens.data(), positions.data(), n, x.data());
  for (int layer = 0; layer < c.n_layer; ++layer) {
    qkv(layer, x.data(), n, q.data(), k.data(), v.data());
    expand_heads(k.data(), n, k12.data());
    expand_heads(v.data(), n, v12.data());
    detail::causal_attention(*base_, q.data(), k12.data(), v12.data(), 0, n, attn.data());
    finish_block(layer, attn.data(), n, x.data());
  }
  return detail::all_logits(*base_, x.data(), n);
}

}  // namespace gpt2
