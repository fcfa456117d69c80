// LatentModel: multi-head latent attention on GPT-2's weights (latent.hpp).
#include "latent.hpp"

#include <cstring>
#include <string>

#include "detail.hpp"
#include "kernels.hpp"
#include "numerics.hpp"
#include "ops.hpp"
#include "synthetic.hpp"
#include "threads.hpp"

namespace gpt2 {

// One layer's up-projections, bfloat16 panels in storage_.
struct LatentModel::Layer {
  kernels::Matrix uk;                 // W_uk [128, d_model]: expand_keys
  std::vector<kernels::Matrix> uk_t;  // [n_head] of [head_dim, 128]: head h's W_uk_h, transposed
  kernels::Matrix uv;                 // W_uv [128, d_model]
};

namespace {

constexpr int FIRST_LATENT_TENSOR = 1000;  // W_uk of layer l: 1000 + 2l; W_uv: 1001 + 2l

void check_rows(int n_rows, const char* what) {
  if (n_rows < 0)
    throw ModelError(std::string(what) + ": n_rows " + std::to_string(n_rows) + " < 0");
}

}  // namespace

LatentModel::LatentModel(const Model& base, uint64_t seed)
    : base_(&base), seed_(seed), table_(base.config().head_dim, base.config().n_ctx) {
  const Config& c = base.config();
  const int d = c.d_model, hd = c.head_dim, L = LATENT;
  if (d < L + hd) {
    throw ModelError("latent attention: d_model " + std::to_string(d) + " leaves no room for " +
                     std::to_string(L + hd) + " latent and rotary-key columns in c_attn's values");
  }
  if (d % kernels::PANEL != 0 || hd % kernels::PANEL != 0)
    throw ModelError("latent attention: d_model and head_dim must be multiples of " +
                     std::to_string(kernels::PANEL));
  for (int l = 0; l < c.n_layer; ++l)
    detail::column_view(detail::Access::layer(base, l).attn_w, 0, 2 * d + row_dim(),
                        "latent attention");
  // Per layer: W_uk's panels, its per-head transposes, W_uv's panels (the same count each).
  const size_t per_matrix = kernels::panel_floats(L, d);
  const size_t per_head_t = kernels::panel_floats(hd, L);
  const size_t per_layer = 2 * per_matrix + static_cast<size_t>(c.n_head) * per_head_t;
  storage_.assign(per_layer * c.n_layer, 0);
  layers_.resize(c.n_layer);
  ThreadPool& pool = detail::Access::pool(base);
  pool.run(c.n_layer, [&](int l, int) {
    uint16_t* at = storage_.data() + per_layer * l;
    Layer& layer = layers_[l];
    thread_local std::vector<float> values;  // [128, d_model], row-major
    values.resize(static_cast<size_t>(L) * d);
    auto top16 = [](float v) { return static_cast<uint16_t>(numerics::float_bits(v) >> 16); };
    auto matrix = [&](int n_in, int n_out, uint16_t* bf16) {
      kernels::Matrix m;
      m.n_in = n_in;
      m.n_out = n_out;
      m.panels = true;
      m.bf16 = bf16;
      return m;
    };
    for (int which = 0; which < 2; ++which) {
      // Every value a bfloat16 already (synthetic.hpp cuts matrices to it).
      synthetic_fill(seed, FIRST_LATENT_TENSOR + 2 * l + which, TensorKind::matrix, 0,
                     values.size(), values.data());
      uint16_t* panels = at;
      at += per_matrix;
      for (int t = 0; t < L; ++t)
        for (int j = 0; j < d; ++j)
          panels[kernels::panel_index(L, t, j)] = top16(values[static_cast<size_t>(t) * d + j]);
      (which == 0 ? layer.uk : layer.uv) = matrix(L, d, panels);
      if (which == 1) continue;
      for (int h = 0; h < c.n_head; ++h) {  // uk_t[h][dd][t] = W_uk[t][h*hd + dd]
        uint16_t* t_panels = at;
        at += per_head_t;
        for (int t = 0; t < L; ++t)
          for (int dd = 0; dd < hd; ++dd)
            t_panels[kernels::panel_index(hd, dd, t)] =
                top16(values[static_cast<size_t>(t) * d + h * hd + dd]);
        layer.uk_t.push_back(matrix(hd, L, t_panels));
      }
    }
  });
}

LatentModel::LatentModel(LatentModel&&) noexcept = default;
LatentModel& LatentModel::operator=(LatentModel&&) noexcept = default;
LatentModel::~LatentModel() = default;

float LatentModel::scale() const { return attention_scale(2 * config().head_dim); }

void LatentModel::embed(const int* tokens, int n_rows, float* x) const {
  detail::embed_tokens(*base_, tokens, n_rows, x, "latent embed");
}

void LatentModel::project(int layer, const float* x, const int* positions, int n_rows,
                          float* q_nope, float* q_rope, float* rows) const {
  const Config& c = config();
  const detail::LayerWeights& lw = detail::Access::layer(*base_, layer);
  check_rows(n_rows, "latent project");
  for (int r = 0; r < n_rows; ++r) {
    if (positions[r] < 0 || positions[r] >= table_.max_positions())
      throw ModelError("latent project: row " + std::to_string(r) + ": position " +
                       std::to_string(positions[r]) + " is outside 0 .. " +
                       std::to_string(table_.max_positions() - 1));
  }
  if (n_rows == 0) return;
  detail::Access::count_qkv(*base_, layer, n_rows);
  ThreadPool* pool = &detail::Access::pool(*base_);
  const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
  const size_t rd = static_cast<size_t>(row_dim()), width = 2 * d + rd;
  thread_local std::vector<float> h, t;
  h.resize(n_rows * d);      // [n_rows, d_model]
  t.resize(n_rows * width);  // [n_rows, 2 d_model + 192]: q_nope | q_rope | c | k_rope
  kernels::layer_norm_rows(x, lw.ln1_w, lw.ln1_b, n_rows, c.d_model, h.data(), pool);
  const kernels::Matrix w =
      detail::column_view(lw.attn_w, 0, static_cast<int>(width), "latent attention");
  kernels::matmul(h.data(), n_rows, w, lw.attn_b, t.data(), kernels::Epilogue::store, pool);
  for (int r = 0; r < n_rows; ++r) {
    const float* src = t.data() + r * width;
    std::memcpy(q_nope + r * d, src, d * sizeof(float));
    float* qr = q_rope + r * d;
    for (int head = 0; head < c.n_head; ++head)
      table_.rotate(src + d + head * hd, positions[r], qr + head * hd);
    float* row = rows + r * rd;
    std::memcpy(row, src + 2 * d, LATENT * sizeof(float));
    table_.rotate(src + 2 * d + LATENT, positions[r], row + LATENT);
  }
}

void LatentModel::absorb_query(int layer, const float* q_nope, const float* q_rope, int n_rows,
                               float* q) const {
  const Config& c = config();
  check_rows(n_rows, "latent absorb_query");
  detail::Access::layer(*base_, layer);  // checks the index
  const Layer& lw = layers_[static_cast<size_t>(layer)];
  if (n_rows == 0) return;
  const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
  const size_t qd = static_cast<size_t>(query_dim()), q_row = static_cast<size_t>(c.n_head) * qd;
  detail::Access::pool(*base_).run(c.n_head, [&](int head, int) {
    thread_local std::vector<float> x, y;
    x.resize(n_rows * hd);      // [n_rows, head_dim]: q_nope_h
    y.resize(n_rows * LATENT);  // [n_rows, 128]: q_latent_h
    for (int r = 0; r < n_rows; ++r)
      std::memcpy(x.data() + r * hd, q_nope + r * d + head * hd, hd * sizeof(float));
    kernels::matmul(x.data(), n_rows, lw.uk_t[head], nullptr, y.data(), kernels::Epilogue::store,
                    nullptr);
    for (int r = 0; r < n_rows; ++r) {
      float* out = q + r * q_row + head * qd;
      std::memcpy(out, y.data() + r * LATENT, LATENT * sizeof(float));
      std::memcpy(out + LATENT, q_rope + r * d + head * hd, hd * sizeof(float));
    }
  });
}

void LatentModel::output_from_latent(int layer, const float* o, int n_rows, float* attn) const {
  const Config& c = config();
  check_rows(n_rows, "latent output_from_latent");
  detail::Access::layer(*base_, layer);  // checks the index
  const Layer& lw = layers_[static_cast<size_t>(layer)];
  if (n_rows == 0) return;
  const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
  const size_t o_row = static_cast<size_t>(c.n_head) * LATENT;
  detail::Access::pool(*base_).run(c.n_head, [&](int head, int) {
    const kernels::Matrix w = detail::column_view(lw.uv, head * c.head_dim, c.head_dim, "latent");
    thread_local std::vector<float> x, y;
    x.resize(n_rows * LATENT);  // [n_rows, 128]: o_h
    y.resize(n_rows * hd);      // [n_rows, head_dim]
    for (int r = 0; r < n_rows; ++r)
      std::memcpy(x.data() + r * LATENT, o + r * o_row + head * LATENT, LATENT * sizeof(float));
    kernels::matmul(x.data(), n_rows, w, nullptr, y.data(), kernels::Epilogue::store, nullptr);
    for (int r = 0; r < n_rows; ++r)
      std::memcpy(attn + r * d + head * hd, y.data() + r * hd, hd * sizeof(float));
  });
}

namespace {

// The latents c of rows [n_rows, row_dim] as [n_rows, 128].
void gather_latents(const float* rows, int n_rows, size_t row_dim, std::vector<float>& c) {
  c.resize(static_cast<size_t>(n_rows) * LatentModel::LATENT);
  for (int r = 0; r < n_rows; ++r)
    std::memcpy(c.data() + r * LatentModel::LATENT, rows + r * row_dim,
                LatentModel::LATENT * sizeof(float));
}

}  // namespace

void LatentModel::expand_keys(int layer, const float* rows, int n_rows, float* keys) const {
  const Config& c = config();
  check_rows(n_rows, "latent expand_keys");
  detail::Access::layer(*base_, layer);
  if (n_rows == 0) return;
  const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
  const size_t rd = static_cast<size_t>(row_dim()), kd = 2 * hd;
  thread_local std::vector<float> lat, k_nope;
  gather_latents(rows, n_rows, rd, lat);
  k_nope.resize(n_rows * d);  // [n_rows, d_model]: W_uk_h^T c, head h in its columns
  kernels::matmul(lat.data(), n_rows, layers_[layer].uk, nullptr, k_nope.data(),
                  kernels::Epilogue::store, &detail::Access::pool(*base_));
  for (int r = 0; r < n_rows; ++r) {
    for (int head = 0; head < c.n_head; ++head) {
      float* k = keys + (static_cast<size_t>(r) * c.n_head + head) * kd;
      std::memcpy(k, k_nope.data() + r * d + head * hd, hd * sizeof(float));
      std::memcpy(k + hd, rows + r * rd + LATENT, hd * sizeof(float));
    }
  }
}

void LatentModel::expand_values(int layer, const float* rows, int n_rows, float* values) const {
  check_rows(n_rows, "latent expand_values");
  detail::Access::layer(*base_, layer);
  if (n_rows == 0) return;
  thread_local std::vector<float> lat;
  gather_latents(rows, n_rows, static_cast<size_t>(row_dim()), lat);
  kernels::matmul(lat.data(), n_rows, layers_[layer].uv, nullptr, values, kernels::Epilogue::store,
                  &detail::Access::pool(*base_));
}

void LatentModel::finish_block(int layer, const float* attn, int n_rows, float* x) const {
  base_->finish_block(layer, attn, n_rows, x);
}

void LatentModel::logits(const float* x, int n_rows, float* logits) const {
  base_->logits(x, n_rows, logits);
}

std::vector<float> LatentModel::forward(std::span<const int> tokens) const {
  const Config& c = config();
  const std::vector<int> positions = detail::forward_positions(*base_, tokens);
  const int n = static_cast<int>(tokens.size());
  if (n == 0) return {};
  const size_t d = static_cast<size_t>(c.d_model), H = static_cast<size_t>(c.n_head);
  const size_t rd = static_cast<size_t>(row_dim()), qd = static_cast<size_t>(query_dim());
  std::vector<float> x(n * d), q_nope(n * d), q_rope(n * d), attn(n * d);  // [n, d_model]
  std::vector<float> rows(n * rd);                                         // [n, 192]
  std::vector<float> q(n * H * qd);                                        // [n, n_head, 192]
  std::vector<float> o(n * H * LATENT);                                    // [n, n_head, 128]
  detail::HeadLayout a;
  a.n_head = c.n_head;
  a.group = c.n_head;  // one K/V "head": the cached rows
  a.dim = query_dim();
  a.value_dim = LATENT;
  a.scale = scale();
  a.q = q.data();
  a.q_stride = H * qd;
  a.q_head = qd;
  a.k = a.v = rows.data();
  a.k_stride = a.v_stride = rd;
  a.out = o.data();
  a.out_stride = H * LATENT;
  a.out_head = LATENT;
  embed(tokens.data(), n, x.data());
  for (int layer = 0; layer < c.n_layer; ++layer) {
    project(layer, x.data(), positions.data(), n, q_nope.data(), q_rope.data(), rows.data());
    absorb_query(layer, q_nope.data(), q_rope.data(), n, q.data());
    detail::causal_attention(*base_, a, 0, n);
    output_from_latent(layer, o.data(), n, attn.data());
    finish_block(layer, attn.data(), n, x.data());
  }
  return detail::all_logits(*base_, x.data(), n);
}

std::vector<float> LatentModel::forward_expanded(std::span<const int> tokens) const {
  const Config& c = config();
  const std::vector<int> positions = detail::forward_positions(*base_, tokens);
  const int n = static_cast<int>(tokens.size());
  if (n == 0) return {};
  const size_t d = static_cast<size_t>(c.d_model), H = static_cast<size_t>(c.n_head);
  const size_t hd = static_cast<size_t>(c.head_dim), kd = 2 * hd,
               rd = static_cast<size_t>(row_dim());
  std::vector<float> x(n * d), q_nope(n * d), q_rope(n * d), attn(n * d), v(n * d);  // [n, d_model]
  std::vector<float> rows(n * rd);                                                   // [n, 192]
  std::vector<float> q(n * H * kd), k(n * H * kd);  // [n, n_head, 128]
  detail::HeadLayout a;
  a.n_head = c.n_head;
  a.dim = static_cast<int>(kd);
  a.value_dim = c.head_dim;
  a.scale = scale();
  a.q = q.data();
  a.k = k.data();
  a.q_stride = a.k_stride = H * kd;
  a.q_head = a.k_head = kd;
  a.v = v.data();
  a.out = attn.data();
  a.v_stride = a.out_stride = d;
  a.v_head = a.out_head = hd;
  embed(tokens.data(), n, x.data());
  for (int layer = 0; layer < c.n_layer; ++layer) {
    project(layer, x.data(), positions.data(), n, q_nope.data(), q_rope.data(), rows.data());
    for (int r = 0; r < n; ++r) {
      for (size_t head = 0; head < H; ++head) {  // q_h = [q_nope_h ; q_rope_h]
        float* qh = q.data() + (r * H + head) * kd;
        std::memcpy(qh, q_nope.data() + r * d + head * hd, hd * sizeof(float));
        std::memcpy(qh + hd, q_rope.data() + r * d + head * hd, hd * sizeof(float));
      }
    }
    expand_keys(layer, rows.data(), n, k.data());
    expand_values(layer, rows.data(), n, v.data());
    detail::causal_attention(*base_, a, 0, n);
    finish_block(layer, attn.data(), n, x.data());
  }
  return detail::all_logits(*base_, x.data(), n);
}

}  // namespace gpt2
