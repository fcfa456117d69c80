// exp, tanh, attention_scale, the attention helpers and half precision (see ops.hpp and
// DETERMINISM.md).
//
// exp and tanh work in double internally: every double operation below is a plain IEEE
// operation (no libm, no contraction), so the result is the same on every x86-64 or
// AArch64 compiler and flag set. Double precision leaves about 25 spare bits, which makes
// the one final rounding to float correct except in very rare near-tie cases.
#include "ops.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "gpt2.hpp"
#include "kernels.hpp"
#include "numerics.hpp"
#include "safetensors.hpp"

static_assert(FLT_EVAL_METHOD == 0, "float arithmetic must be evaluated in float (SSE, not x87)");

namespace gpt2 {

using numerics::exp_core;

float exp(float x) {
  if (x != x) return x;  // NaN
  // Past these bounds the float result is +inf or 0 whatever the rounding; inside them
  // the double result is finite and normal, and the cast rounds it (to inf, a subnormal
  // or 0 where the true value lies there).
  if (x > 89.0f) return INFINITY;
  if (x < -110.0f) return 0.0f;  // also exp(-inf) == 0
  return static_cast<float>(exp_core(static_cast<double>(x)));
}

float tanh(float x) {
  if (x != x) return x;
  if (x == 0.0f) return x;  // keeps the sign of zero
  const double a = x < 0.0f ? -static_cast<double>(x) : static_cast<double>(x);
  double t;
  if (a > 10.0) {
    t = 1.0;  // tanh(10) = 1 - 4e-9 already rounds to 1.0f
  } else if (a < 0x1p-6) {
    t = numerics::tanh_taylor(a);
  } else {
    const double e = exp_core(2.0 * a);
    t = 1.0 - 2.0 / (e + 1.0);
  }
  const float f = static_cast<float>(t);
  return x < 0.0f ? -f : f;
}

float attention_scale(int head_dim) {
  if (head_dim < 1 || head_dim > (1 << 24)) {
    throw ModelError("attention_scale: head_dim " + std::to_string(head_dim) +
                     " is outside 1 .. 2^24");
  }
  // A double estimate of 1/sqrt(n) (sqrt and division are correctly rounded IEEE
  // operations) is within 2 double ulps of the true value; rounding it to float is correct
  // unless the true value lies within that distance of a float rounding midpoint. So check
  // the result against its two midpoints exactly and step by one ulp if it is outside.
  const uint64_t n = static_cast<uint64_t>(head_dim);
  float f = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  for (int step = 0; step < 4; ++step) {
    const uint32_t bits = numerics::float_bits(f);
    const float below = numerics::float_from_bits(bits - 1);
    const float above = numerics::float_from_bits(bits + 1);
    // midpoint m between two positive normal floats: is m^2 * n compared with 1?
    if (numerics::midpoint_squared_times_n_compare(f, above, n) <= 0) {
      f = above;  // 1/sqrt(n) >= upper midpoint: f is too small
    } else if (numerics::midpoint_squared_times_n_compare(below, f, n) >= 0) {
      f = below;  // 1/sqrt(n) <= lower midpoint: f is too large
    } else {
      return f;
    }
  }
  return f;  // not reached: the estimate is never more than one ulp off
}

float dot(const float* a, const float* b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void softmax(float* x, int n) {
  if (n <= 0) return;
  float m = x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] > m) m = x[i];
  }
  kernels::exp_shifted(x, n, m);  // x[i] = gpt2::exp(x[i] - m), several lanes at a time
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += x[i];
  for (int i = 0; i < n; ++i) x[i] = x[i] / s;
}

void weighted_sum(const float* p, const float* rows, int n, int stride, int dim, float* out) {
  // Outputs side by side in vectors; each output's sum still runs over j in order.
  kernels::weighted_sum(p, rows, n, stride, dim, out);
}

// Half precision: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
uint16_t half_from_float(float x) {
  const uint32_t b = numerics::float_bits(x);
  const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  const uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u)  // NaN: quiet, the payload's top bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u)  // +-inf, and every finite |x| >= 65520 (halfway past 65504)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (a >= 0x38800000u) {
    // A normal half (|x| >= 2^-14): the exponent rebiased from 127 to 15 by subtracting
    // 112 << 23, then the 23 fraction bits rounded to 10: add just under half of the last
    // kept bit, plus that bit itself (a tie then carries only from an odd result). A carry
    // out of the fraction steps the exponent up, which is the right result.
    const uint32_t r = a - 0x38000000u;
    return static_cast<uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) return sign;  // |x| <= 2^-25: 0 (2^-25 is a tie, to the even 0)
  // A subnormal half: |x| / 2^-24 rounded to an integer, ties to even. |x| is the 24-bit
  // significand m times 2^(e - 150), so the integer is m shifted right by 126 - e (14..24).
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;
  const uint32_t kept = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t up = rest > half || (rest == half && (kept & 1u)) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (kept + up));  // kept + up may be 0x400: 2^-14, normal
}

float float_from_half(uint16_t h) {
  // The safetensors reader's exact widening of F16 tensors; a NaN then made quiet, as
  // the CPU's vcvtph2ps does (that reader keeps a NaN's bits as they are).
  const float f = safetensors::f16_to_f32(h);
  return f != f ? numerics::float_from_bits(numerics::float_bits(f) | 0x400000u) : f;
}

}  // namespace gpt2
