// Small internal helpers shared by the model's .cpp files: float bit access, the 4-float
// vector type, the exact midpoint test behind attention_scale, and the polynomial steps of
// gpt2::exp and gpt2::tanh, written once for a double and for a vector of doubles (the
// vector GELU in lanes.hpp runs the very same steps). Not part of the API a learner uses.
//
// The vector type is the GCC/Clang vector extension. Its + and * act lane by lane with
// the same IEEE rounding as scalar float + and *, so a loop written with it gives the same
// bits as the scalar loop; it only lets the compiler use SSE2 at -O2 (where GCC does not
// auto-vectorize loops of unknown length). With AVX or AVX-512 enabled the compiler may
// use wider registers for it; the lanes still compute the same values.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpt2::numerics {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Sign of ((a + b) / 2)^2 * n - 1, computed exactly, for positive normal floats a < b
// that are neighbours (so the midpoint has at most 26 significant bits) and n < 2^25.
inline int midpoint_squared_times_n_compare(float a, float b, uint64_t n) {
  const uint32_t ba = float_bits(a), bb = float_bits(b);
  const int ea = static_cast<int>((ba >> 23) & 0xff) - 150;  // a = ma * 2^ea
  const int eb = static_cast<int>((bb >> 23) & 0xff) - 150;
  const uint64_t ma = (ba & 0x7fffffu) | 0x800000u;
  const uint64_t mb = (bb & 0x7fffffu) | 0x800000u;
  const int e0 = ea < eb ? ea : eb;
  const uint64_t k = (ma << (ea - e0)) + (mb << (eb - e0));  // midpoint = k * 2^(e0 - 1)
  // midpoint^2 * n = k^2 * n * 2^(2 e0 - 2); compare k^2 * n with 2^(2 - 2 e0).
  const unsigned __int128 lhs = static_cast<unsigned __int128>(k) * k * n;
  const int s = 2 - 2 * e0;
  if (s < 0) return 1;
  if (s >= 127) return -1;
  const unsigned __int128 rhs = static_cast<unsigned __int128>(1) << s;
  return lhs < rhs ? -1 : (lhs > rhs ? 1 : 0);
}

typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

inline v4f load4(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store4(float* p, v4f v) { std::memcpy(p, &v, sizeof v); }

inline v4f splat4(float s) { return v4f{s, s, s, s}; }

// ---- the arithmetic of gpt2::exp and gpt2::tanh (ops.cpp, DETERMINISM.md) ----------------
// D is double or a vector of doubles; with a vector, each lane performs the scalar steps.

// ln 2 split in two: LN2_HI has 40 significant bits, so n * LN2_HI is exact for |n| < 2^13.
constexpr double LN2_HI = 0x1.62e42fefa2000p-1;
constexpr double LN2_LO = 0x1.9ef35793c7673p-41;
constexpr double LOG2E = 0x1.71547652b82fep+0;  // 1 / ln 2, rounded to double

// 1/k! for k = 0..11, each the double nearest the exact value (k! is exact in double).
constexpr double inverse_factorial(int k) {
  double f = 1.0;
  for (int i = 2; i <= k; ++i) f *= i;
  return 1.0 / f;
}

// e^y = 2^n * e^r: the reduced argument r = (y - n*LN2_HI) - n*LN2_LO, |r| <= 0.3466,
// for n the integer nearest y / ln 2 (nd is n as a double).
template <class D>
[[gnu::always_inline]] inline D exp_reduced(D y, D nd) {
  return (y - nd * LN2_HI) - nd * LN2_LO;
}

// e^r = 1 + r + r^2/2! + ... + r^11/11! (Horner, from the r^11 term down).
template <class D>
[[gnu::always_inline]] inline D exp_taylor(D r) {
  D p = r * inverse_factorial(11) + inverse_factorial(10);
  p = p * r + inverse_factorial(9);
  p = p * r + inverse_factorial(8);
  p = p * r + inverse_factorial(7);
  p = p * r + inverse_factorial(6);
  p = p * r + inverse_factorial(5);
  p = p * r + inverse_factorial(4);
  p = p * r + inverse_factorial(3);
  p = p * r + inverse_factorial(2);
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p;
}

// tanh a for 0 <= a < 2^-6: a - a^3/3 + 2a^5/15 - 17a^7/315 + 62a^9/2835; the next term is
// below 2^-60 relative there.
template <class D>
[[gnu::always_inline]] inline D tanh_taylor(D a) {
  const D a2 = a * a;
  D p = a2 * (62.0 / 2835.0) - 17.0 / 315.0;
  p = p * a2 + 2.0 / 15.0;
  p = p * a2 - 1.0 / 3.0;
  return a + a * (a2 * p);
}

inline double double_from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// e^y in double for |y| <= 700, relative error about 2^-47 (gpt2::exp is this, rounded to
// float once):
//   n = nearest integer to y / ln2 (halves away from zero);  r = exp_reduced(y, n)
//   p = exp_taylor(r);  result = p * 2^n, 2^n built from its exponent bits (exact).
// (lanes.hpp's exp_core_lanes is the same on every lane of a vector.)
inline double exp_core(double y) {
  const double t = y * LOG2E;
  // Round half away from zero through a truncating conversion (|t| < 2^31 here).
  const int64_t n = t >= 0 ? static_cast<int64_t>(t + 0.5) : -static_cast<int64_t>(-t + 0.5);
  const double nd = static_cast<double>(n);
  const double p = exp_taylor(exp_reduced(y, nd));
  const double two_n = double_from_bits(static_cast<uint64_t>(n + 1023) << 52);
  return p * two_n;
}

}  // namespace gpt2::numerics
