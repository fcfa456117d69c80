// Rotary positions: the table, the rotation, and GPT-2 with rotary positions (rotary.hpp).
#include "rotary.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "detail.hpp"
#include "kernels.hpp"
#include "numerics.hpp"
#include "ops.hpp"
#include "threads.hpp"

namespace gpt2 {

namespace {

using numerics::inverse_factorial;

// ln 10000, rounded to double.
constexpr double LN_10000 = 0x1.26bb1bbb55516p+3;
// 2/pi rounded to double, and pi/2 in three parts: P1 and P2 have 33 significant bits (so
// k * P1 and k * P2 are exact for k < 2^20), P3 is the rest rounded to double.
constexpr double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
constexpr double PIO2_1 = 0x1.921fb54400000p+0;
constexpr double PIO2_2 = 0x1.0b4611a600000p-34;
constexpr double PIO2_3 = 0x1.3198a2e037073p-69;

// sin and cos of a, 0 <= a < 2^20, in double with plain IEEE operations (no libm):
//   k = a * 2/pi rounded to the nearest integer (half up);  r = ((a - k*P1) - k*P2) - k*P3
//   s = r + r * (r2 * S),  S = -1/3! + r2 * (1/5! + ... + r2 * (1/17!))    (Horner in r2)
//   c = 1 + r2 * (r2 * C - 1/2),  C = 1/4! + r2 * (-1/6! + ... + r2 * (1/16!))
//   (sin a, cos a) = (s, c), (c, -s), (-s, -c) or (-c, s) for k mod 4 = 0, 1, 2, 3.
// |r| <= pi/4 + 2^-30 or so; the polynomials' truncation is below 2^-60 relative there.
void sin_cos(double a, double& sin_a, double& cos_a) {
  const int64_t k = static_cast<int64_t>(a * TWO_OVER_PI + 0.5);
  const double kd = static_cast<double>(k);
  const double r = ((a - kd * PIO2_1) - kd * PIO2_2) - kd * PIO2_3;
  const double r2 = r * r;
  double sp = inverse_factorial(17);
  sp = sp * r2 - inverse_factorial(15);
  sp = sp * r2 + inverse_factorial(13);
  sp = sp * r2 - inverse_factorial(11);
  sp = sp * r2 + inverse_factorial(9);
  sp = sp * r2 - inverse_factorial(7);
  sp = sp * r2 + inverse_factorial(5);
  sp = sp * r2 - inverse_factorial(3);
  const double s = r + r * (r2 * sp);
  double cp = inverse_factorial(16);
  cp = cp * r2 - inverse_factorial(14);
  cp = cp * r2 + inverse_factorial(12);
  cp = cp * r2 - inverse_factorial(10);
  cp = cp * r2 + inverse_factorial(8);
  cp = cp * r2 - inverse_factorial(6);
  cp = cp * r2 + inverse_factorial(4);
  const double c = 1.0 + r2 * (r2 * cp - 0.5);
  switch (k & 3) {
    case 0:
      sin_a = s;
      cos_a = c;
      break;
    case 1:
      sin_a = c;
      cos_a = -s;
      break;
    case 2:
      sin_a = -s;
      cos_a = -c;
      break;
    default:
      sin_a = -c;
      cos_a = s;
      break;
  }
}

}  // namespace

RotaryTable::RotaryTable(int head_dim, int max_positions)
    : head_dim_(head_dim), max_positions_(max_positions) {
  if (head_dim < 2 || head_dim % 2 != 0 || head_dim > (1 << 16))
    throw ModelError("rotary table: head_dim " + std::to_string(head_dim) +
                     " is not an even number from 2 to 65536");
  if (max_positions < 1 || max_positions > (1 << 20))
    throw ModelError("rotary table: max_positions " + std::to_string(max_positions) +
                     " is outside 1 .. 2^20");
  const int n = pairs();
  inv_freq_.resize(n);
  for (int i = 0; i < n; ++i) {
    // 10000^(-2i/head_dim) = e^(-(2i/head_dim) * ln 10000): 2i/head_dim is exact for a
    // power-of-two head_dim; then one rounded product, numerics::exp_core, one rounding.
    const double e = static_cast<double>(2 * i) / static_cast<double>(head_dim);
    inv_freq_[i] = static_cast<float>(numerics::exp_core(-(e * LN_10000)));
  }
  cos_.resize(static_cast<size_t>(max_positions) * n);
  sin_.resize(cos_.size());
  for (int p = 0; p < max_positions; ++p) {
    for (int i = 0; i < n; ++i) {
      // p < 2^20 and a float's 24 bits: the product is exact in double.
      const double angle = static_cast<double>(p) * static_cast<double>(inv_freq_[i]);
      double s, c;
      sin_cos(angle, s, c);
      cos_[static_cast<size_t>(p) * n + i] = static_cast<float>(c);
      sin_[static_cast<size_t>(p) * n + i] = static_cast<float>(s);
    }
  }
}

void RotaryTable::check(int position, int pair) const {
  if (position < 0 || position >= max_positions_)
    throw ModelError("rotary: position " + std::to_string(position) + " is outside 0 .. " +
                     std::to_string(max_positions_ - 1));
  if (pair < 0 || pair >= pairs())
    throw ModelError("rotary: pair " + std::to_string(pair) + " is outside 0 .. " +
                     std::to_string(pairs() - 1));
}

float RotaryTable::inv_freq(int pair) const {
  check(0, pair);
  return inv_freq_[static_cast<size_t>(pair)];
}

float RotaryTable::cos(int position, int pair) const {
  check(position, pair);
  return cos_[static_cast<size_t>(position) * pairs() + pair];
}

float RotaryTable::sin(int position, int pair) const {
  check(position, pair);
  return sin_[static_cast<size_t>(position) * pairs() + pair];
}

void RotaryTable::rotate(const float* x, int position, float* out) const {
  check(position, 0);
  const int n = pairs();
  const float* c = cos_.data() + static_cast<size_t>(position) * n;
  const float* s = sin_.data() + static_cast<size_t>(position) * n;
  for (int i = 0; i < n; ++i) {
    const float x0 = x[2 * i], x1 = x[2 * i + 1];
    out[2 * i] = x0 * c[i] - x1 * s[i];
    out[2 * i + 1] = x0 * s[i] + x1 * c[i];
  }
}

void attend_rows(const float* q, const float* keys, int key_stride, const float* values,
                 int value_stride, int n, int dim, float* out) {
  if (n < 1) throw ModelError("attend_rows: no rows to attend to");
  thread_local std::vector<float> scores;
  if (scores.size() < static_cast<size_t>(n)) scores.resize(n);
  detail::attention_scores(q, keys, n, key_stride, dim, attention_scale(dim), scores.data());
  softmax(scores.data(), n);
  weighted_sum(scores.data(), values, n, value_stride, dim, out);
}

RotaryModel::RotaryModel(const Model& base)
    : base_(&base), table_(base.config().head_dim, base.config().n_ctx) {}

void RotaryModel::embed(const int* tokens, int n_rows, float* x) const {
  detail::embed_tokens(*base_, tokens, n_rows, x, "rotary embed");
}

void RotaryModel::qkv(int layer, const float* x, int n_rows, float* q, float* k, float* v) const {
  base_->qkv(layer, x, n_rows, q, k, v);
}

void RotaryModel::rotate(float* rows, int n_rows, const int* positions) const {
  const Config& c = config();
  for (int r = 0; r < n_rows; ++r) {
    if (positions[r] < 0 || positions[r] >= table_.max_positions())
      throw ModelError("rotary: row " + std::to_string(r) + ": position " +
                       std::to_string(positions[r]) + " is outside 0 .. " +
                       std::to_string(table_.max_positions() - 1));
  }
  for (int r = 0; r < n_rows; ++r) {
    for (int h = 0; h < c.n_head; ++h)
      table_.rotate(rows + static_cast<size_t>(r) * c.d_model + h * c.head_dim, positions[r]);
  }
}

void RotaryModel::finish_block(int layer, const float* attn, int n_rows, float* x) const {
  base_->finish_block(layer, attn, n_rows, x);
}

void RotaryModel::logits(const float* x, int n_rows, float* logits) const {
  base_->logits(x, n_rows, logits);
}

std::vector<float> RotaryModel::forward(std::span<const int> tokens) const {
  const Config& c = config();
  const std::vector<int> positions = detail::forward_positions(*base_, tokens);
  const int n = static_cast<int>(tokens.size());
  if (n == 0) return {};
  const size_t d = static_cast<size_t>(c.d_model);
  std::vector<float> x(n * d), q(n * d), k(n * d), v(n * d), attn(n * d);  // [n, d_model]
  embed(tokens.data(), n, x.data());
  for (int layer = 0; layer < c.n_layer; ++layer) {
    qkv(layer, x.data(), n, q.data(), k.data(), v.data());
    rotate(q.data(), n, positions.data());
    rotate(k.data(), n, positions.data());
    detail::causal_attention(*base_, q.data(), k.data(), v.data(), 0, n, attn.data());
    finish_block(layer, attn.data(), n, x.data());
  }
  return detail::all_logits(*base_, x.data(), n);
}

std::vector<float> RotaryModel::forward_streaming(std::span<const int> tokens, int sink,
                                                  int window) const {
  const Config& c = config();
  if (sink < 0 || window < 1 || sink + window > c.n_ctx)
    throw ModelError("forward_streaming: sink " + std::to_string(sink) + " and window " +
                     std::to_string(window) +
                     " must be >= 0 and >= 1, sink + window <= " + std::to_string(c.n_ctx));
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab)
      throw ModelError("forward_streaming: token " + std::to_string(i) + " has id " +
                       std::to_string(tokens[i]) + ", outside 0 .. " + std::to_string(c.vocab - 1));
  }
  const int n = static_cast<int>(tokens.size());
  std::vector<float> out(static_cast<size_t>(n) * c.vocab);
  if (n == 0) return out;
  detail::Access::count_forward(*base_, n);
  const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
  const size_t capacity = static_cast<size_t>(sink + window);
  // Per layer, the held rows in position order: keys as qkv made them (not rotated).
  std::vector<std::vector<float>> keys(c.n_layer), values(c.n_layer);  // [held, d_model]
  std::vector<float> x(d), q(d), k(d), v(d), attn(d);                  // [1, d_model]
  ThreadPool& pool = detail::Access::pool(*base_);
  for (int t = 0; t < n; ++t) {
    embed(&tokens[t], 1, x.data());
    for (int layer = 0; layer < c.n_layer; ++layer) {
      qkv(layer, x.data(), 1, q.data(), k.data(), v.data());
      std::vector<float>& kl = keys[layer];
      std::vector<float>& vl = values[layer];
      kl.insert(kl.end(), k.begin(), k.end());
      vl.insert(vl.end(), v.begin(), v.end());
      if (kl.size() > capacity * d) {  // evict the oldest row that is not a sink
        kl.erase(kl.begin() + sink * d, kl.begin() + (sink + 1) * d);
        vl.erase(vl.begin() + sink * d, vl.begin() + (sink + 1) * d);
      }
      const int held = static_cast<int>(kl.size() / d);
      pool.run(c.n_head, [&](int h, int) {
        thread_local std::vector<float> rotated, q_h;  // [held, head_dim], [head_dim]
        rotated.resize(static_cast<size_t>(held) * hd);
        q_h.resize(hd);
        for (int j = 0; j < held; ++j)
          table_.rotate(kl.data() + j * d + h * hd, j, rotated.data() + j * hd);
        table_.rotate(q.data() + h * hd, held - 1, q_h.data());
        attend_rows(q_h.data(), rotated.data(), c.head_dim, vl.data() + h * hd, c.d_model, held,
                    c.head_dim, attn.data() + h * hd);
      });
      finish_block(layer, attn.data(), 1, x.data());
    }
    logits(x.data(), 1, out.data() + static_cast<size_t>(t) * c.vocab);
  }
  return out;
}

}  // namespace gpt2
