// gpt2::exp, gpt2::tanh, attention_scale and the attention helpers (ops.hpp).
#include "ops.hpp"

#include <gtest/gtest.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define KVCOURSE_HAVE_F16C_ORACLE 1
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gpt2.hpp"
#include "kernels.hpp"

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

// ---- half precision ------------------------------------------------------------------

namespace {

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

#if KVCOURSE_HAVE_F16C_ORACLE
// The CPU's own conversions (F16C), round to nearest even: the oracle, where there is one.
__attribute__((target("f16c"))) void hardware_halves(const float* x, uint16_t* h) {
  const __m128i packed = _mm256_cvtps_ph(_mm256_loadu_ps(x), _MM_FROUND_TO_NEAREST_INT);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), packed);
}
__attribute__((target("f16c"))) float hardware_float(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
// F16C (CPUID leaf 1, ECX bit 29), with the AVX state the system must enable for it.
bool have_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return gpt2::kernels::cpu_has(gpt2::kernels::VectorPath::avx2) && __get_cpuid(1, &a, &b, &c, &d) &&
         (c & (1u << 29)) != 0;
}
#endif

}  // namespace

TEST(ops, half_from_float_named_values) {
  EXPECT_EQ(gpt2::half_from_float(0.0f), 0x0000);
  EXPECT_EQ(gpt2::half_from_float(-0.0f), 0x8000);
  EXPECT_EQ(gpt2::half_from_float(1.0f), 0x3c00);
  EXPECT_EQ(gpt2::half_from_float(-2.0f), 0xc000);
  EXPECT_EQ(gpt2::half_from_float(0.1f), 0x2e66);
  EXPECT_EQ(gpt2::half_from_float(65504.0f), 0x7bff);                 // the largest half
  EXPECT_EQ(gpt2::half_from_float(65519.996f), 0x7bff);               // below halfway
  EXPECT_EQ(gpt2::half_from_float(65520.0f), 0x7c00);                 // halfway: to inf
  EXPECT_EQ(gpt2::half_from_float(-1e9f), 0xfc00);
  EXPECT_EQ(gpt2::half_from_float(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(gpt2::half_from_float(0x1p-14f), 0x0400);                 // the smallest normal
  EXPECT_EQ(gpt2::half_from_float(0x1p-24f), 0x0001);                 // the smallest subnormal
  EXPECT_EQ(gpt2::half_from_float(0x1p-25f), 0x0000);                 // halfway to it: to even 0
  EXPECT_EQ(gpt2::half_from_float(0x1.000002p-25f), 0x0001);          // just above halfway
  EXPECT_EQ(gpt2::half_from_float(0x1.8p-24f), 0x0002);               // 1.5: a tie, to even 2
  EXPECT_EQ(gpt2::half_from_float(0x1.4p-23f), 0x0002);               // 2.5: a tie, to even 2
  EXPECT_EQ(gpt2::half_from_float(0x1.ffep-15f), 0x0400);             // rounds up into normal
  EXPECT_EQ(gpt2::half_from_float(1.0f + 0x1p-11f), 0x3c00);          // a tie, to even
  EXPECT_EQ(gpt2::half_from_float(1.0f + 0x1.8p-10f), 0x3c02);        // a tie, to even (up)
  EXPECT_EQ(gpt2::half_from_float(float_of(0x7fc00000u)), 0x7e00);    // quiet NaN
  EXPECT_EQ(gpt2::half_from_float(float_of(0xff800001u)), 0xfe00);    // signalling: made quiet
  EXPECT_EQ(gpt2::half_from_float(float_of(0x7fa02000u)), 0x7f01);    // payload's top bits
}

TEST(ops, every_half_round_trips_through_float) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = gpt2::float_from_half(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    ASSERT_EQ(std::isnan(f), nan) << std::hex << h;
    const uint16_t back = gpt2::half_from_float(f);
    ASSERT_EQ(back, nan ? (h | 0x200) : h) << std::hex << h;  // a NaN comes back quiet
  }
  EXPECT_EQ(gpt2::float_from_half(0x3c00), 1.0f);
  EXPECT_EQ(gpt2::float_from_half(0x0001), 0x1p-24f);
  EXPECT_EQ(gpt2::float_from_half(0x7bff), 65504.0f);
  EXPECT_EQ(bits_of(gpt2::float_from_half(0x8000)), 0x80000000u);
}

// Floats against the CPU's conversion, where the CPU has F16C: every float whose
// exponent lies where halves round differently (2^-27 <= |x| < 2^17: the subnormal
// halves' ties and 65520's), every infinity and NaN, and every 61st float elsewhere (all
// of those are 0, the largest half or inf); then every half back to float.
#if KVCOURSE_HAVE_F16C_ORACLE
TEST(ops, half_conversions_agree_with_f16c) {
  if (!have_f16c()) GTEST_SKIP() << "this CPU has no F16C to compare with";
  uint64_t compared = 0, differ = 0;
  uint32_t first = 0;
  alignas(32) float x[8];
  alignas(16) uint16_t want[8];
  for (uint32_t top = 0; top < 512; ++top) {  // sign and exponent
    const uint32_t e = top & 0xffu;
    const bool every = (e >= 100 && e <= 143) || e == 255;
    const uint32_t step = every ? 1 : 61;
    for (uint32_t f = 0; f < (1u << 23); f += 8 * step) {
      for (uint32_t i = 0; i < 8; ++i)
        x[i] = float_of(top << 23 | std::min(f + i * step, (1u << 23) - 1));
      hardware_halves(x, want);
      for (int i = 0; i < 8; ++i, ++compared) {
        if (gpt2::half_from_float(x[i]) != want[i] && differ++ == 0) first = bits_of(x[i]);
      }
    }
  }
  EXPECT_GT(compared, uint64_t{46} * 2 * (1u << 23));
  EXPECT_EQ(differ, 0u) << "first at float bits 0x" << std::hex << first;
  for (uint32_t h = 0; h <= 0xffff; ++h)
    ASSERT_EQ(bits_of(gpt2::float_from_half(static_cast<uint16_t>(h))),
              bits_of(hardware_float(static_cast<uint16_t>(h))))
        << std::hex << h;
}
#endif
