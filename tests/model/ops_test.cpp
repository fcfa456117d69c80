// gpt2::exp, gpt2::tanh, attention_scale and the attention helpers (ops.hpp).
#include "ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gpt2.hpp"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Floats mapped to integers in order, so that the difference counts ulps.
int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : i;
}

float from_ordered(int64_t o) {
  const int32_t i =
      o < 0 ? static_cast<int32_t>(static_cast<int64_t>(INT32_MIN) - o) : static_cast<int32_t>(o);
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

struct UlpStats {
  int64_t max_ulp = 0;
  int64_t off = 0;  // results not equal to the correctly rounded one
  int64_t count = 0;
  float worst = 0;
};

// Every `stride`-th float in [lo, hi], against the long double function rounded to float.
template <class Mine, class Ref>
UlpStats sweep(float lo, float hi, int64_t stride, Mine mine, Ref ref) {
  UlpStats s;
  for (int64_t o = ordered(lo); o <= ordered(hi); o += stride) {
    const float x = from_ordered(o);
    const float want = static_cast<float>(ref(static_cast<long double>(x)));
    const int64_t u = std::llabs(ordered(mine(x)) - ordered(want));
    ++s.count;
    if (u) ++s.off;
    if (u > s.max_ulp) {
      s.max_ulp = u;
      s.worst = x;
    }
  }
  return s;
}

TEST(ops, exp_special_values) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bits_of(gpt2::exp(-inf)), bits_of(0.0f));  // masked softmax entries: exactly +0
  EXPECT_EQ(gpt2::exp(inf), inf);
  EXPECT_TRUE(std::isnan(gpt2::exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(gpt2::exp(0.0f), 1.0f);
  EXPECT_EQ(gpt2::exp(-0.0f), 1.0f);
  EXPECT_EQ(gpt2::exp(1.0f), 2.71828182f);
  EXPECT_EQ(gpt2::exp(-1000.0f), 0.0f);
  EXPECT_EQ(gpt2::exp(-104.0f), 0.0f);
  EXPECT_EQ(gpt2::exp(89.0f), inf);
  EXPECT_EQ(gpt2::exp(1000.0f), inf);
  EXPECT_EQ(gpt2::exp(88.7f), static_cast<float>(std::exp(static_cast<long double>(88.7f))));
  EXPECT_GT(gpt2::exp(-100.0f), 0.0f);  // subnormal, not flushed
  EXPECT_EQ(gpt2::exp(-100.0f), static_cast<float>(std::exp(-100.0L)));
}

TEST(ops, exp_is_within_one_ulp_over_a_dense_sweep) {
  // Every 401st float from -104 to 89 (about 5.6 million), subnormal results included.
  const UlpStats s =
      sweep(-104.0f, 89.0f, 401, gpt2::exp, [](long double x) { return std::exp(x); });
  EXPECT_LE(s.max_ulp, 1) << "worst at x = " << s.worst;
  // The algorithm is correctly rounded except in rare near-ties (2 in all 2.2e9 floats).
  EXPECT_LE(s.off, 2) << "of " << s.count;
}

TEST(ops, tanh_special_values) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gpt2::tanh(inf), 1.0f);
  EXPECT_EQ(gpt2::tanh(-inf), -1.0f);
  EXPECT_TRUE(std::isnan(gpt2::tanh(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(bits_of(gpt2::tanh(0.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(gpt2::tanh(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(gpt2::tanh(20.0f), 1.0f);
  EXPECT_EQ(gpt2::tanh(-20.0f), -1.0f);
  const float tiny = 1e-30f;
  EXPECT_EQ(gpt2::tanh(tiny), tiny);
  const float sub = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(gpt2::tanh(sub), sub);
  EXPECT_EQ(gpt2::tanh(-sub), -sub);
}

TEST(ops, tanh_is_within_one_ulp_over_a_dense_sweep) {
  const UlpStats s =
      sweep(-12.0f, 12.0f, 401, gpt2::tanh, [](long double x) { return std::tanh(x); });
  EXPECT_LE(s.max_ulp, 1) << "worst at x = " << s.worst;
  EXPECT_LE(s.off, 2) << "of " << s.count;
}

TEST(ops, tanh_is_odd) {
  for (float x = -9.5f; x < 9.5f; x += 0.0137f) {
    EXPECT_EQ(bits_of(gpt2::tanh(-x)), bits_of(-gpt2::tanh(x))) << x;
  }
}

TEST(ops, attention_scale_is_exact_for_powers_of_four) {
  EXPECT_EQ(gpt2::attention_scale(64), 0.125f);
  EXPECT_EQ(gpt2::attention_scale(16), 0.25f);
  EXPECT_EQ(gpt2::attention_scale(4), 0.5f);
  EXPECT_EQ(gpt2::attention_scale(1), 1.0f);
  EXPECT_EQ(gpt2::attention_scale(256), 0.0625f);
}

TEST(ops, attention_scale_is_correctly_rounded) {
  for (int n = 1; n <= 5000; ++n) {
    const float f = gpt2::attention_scale(n);
    const long double t = 1.0L / std::sqrt(static_cast<long double>(n));
    const float below = std::nextafter(f, 0.0f), above = std::nextafter(f, 2.0f);
    EXPECT_LE(std::fabs(f - t), std::fabs(below - t)) << n;
    EXPECT_LE(std::fabs(f - t), std::fabs(above - t)) << n;
  }
  EXPECT_EQ(gpt2::attention_scale(8), 0.353553385f);  // head_dim of the tests' small config
}

TEST(ops, attention_scale_rejects_bad_head_dims) {
  EXPECT_THROW(gpt2::attention_scale(0), gpt2::ModelError);
  EXPECT_THROW(gpt2::attention_scale(-64), gpt2::ModelError);
  EXPECT_THROW(gpt2::attention_scale((1 << 24) + 1), gpt2::ModelError);
}

TEST(ops, dot_is_the_sequential_loop) {
  std::vector<float> a(77), b(77);
  for (int i = 0; i < 77; ++i) {
    a[i] = std::sin(i * 0.37f) * 3.0f;
    b[i] = std::cos(i * 1.91f) / (i + 1);
  }
  float s = 0.0f;
  for (int i = 0; i < 77; ++i) s = s + a[i] * b[i];
  EXPECT_EQ(bits_of(gpt2::dot(a.data(), b.data(), 77)), bits_of(s));
  EXPECT_EQ(gpt2::dot(a.data(), b.data(), 0), 0.0f);
}

TEST(ops, softmax_is_the_documented_loop) {
  std::vector<float> x = {0.3f, -1.25f, 2.5f, 0.0f, 1e-3f, -7.0f, 2.5f};
  std::vector<float> want = x;
  float m = want[0];
  for (float v : want) m = v > m ? v : m;
  float s = 0.0f;
  for (float& v : want) {
    v = gpt2::exp(v - m);
    s = s + v;
  }
  for (float& v : want) v = v / s;
  gpt2::softmax(x.data(), static_cast<int>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits_of(x[i]), bits_of(want[i])) << i;
  double total = 0;
  for (float v : x) total += v;
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST(ops, softmax_masked_entries_are_exactly_zero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1.0f, -inf, 0.5f, -inf};
  gpt2::softmax(x.data(), 4);
  EXPECT_EQ(bits_of(x[1]), bits_of(0.0f));
  EXPECT_EQ(bits_of(x[3]), bits_of(0.0f));
  std::vector<float> y = {1.0f, 0.5f};
  gpt2::softmax(y.data(), 2);
  EXPECT_EQ(x[0], y[0]);
  EXPECT_EQ(x[2], y[1]);
  std::vector<float> one = {-3.0f};
  gpt2::softmax(one.data(), 1);
  EXPECT_EQ(one[0], 1.0f);
}

TEST(ops, weighted_sum_is_the_documented_loop) {
  const int n = 9, stride = 13, dim = 11;
  std::vector<float> p(n), rows(n * stride);
  for (int j = 0; j < n; ++j) p[j] = 1.0f / (j + 2);
  for (int i = 0; i < n * stride; ++i) rows[i] = std::sin(i * 0.77f);
  std::vector<float> out(dim), want(dim);
  gpt2::weighted_sum(p.data(), rows.data(), n, stride, dim, out.data());
  for (int d = 0; d < dim; ++d) {
    float s = 0.0f;
    for (int j = 0; j < n; ++j) s = s + p[j] * rows[j * stride + d];
    want[d] = s;
  }
  for (int d = 0; d < dim; ++d) EXPECT_EQ(bits_of(out[d]), bits_of(want[d])) << d;
}

}  // namespace
