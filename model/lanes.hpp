// Vectors of 4, 8 or 16 floats for the matrix product's vector paths (kernels.cpp), and
// gpt2::exp, gpt2::tanh and GELU computed on every lane of one. Internal to model/.
//
// Each function here performs, on every lane, exactly the float and double operations of
// its scalar counterpart, in the same order: exp_core_lanes is numerics.hpp's exp_core,
// exp_lanes is gpt2::exp, tanh_lanes is gpt2::tanh, gelu_lanes is kernels::gelu (the
// polynomial steps are the shared templates in numerics.hpp). A branch of the scalar code
// becomes a per-lane choice: every lane computes every branch and keeps the one the scalar
// code takes for its value, so the vector width never changes a result.
// tests/model/kernels_test.cpp compares them with the scalar functions bit for bit.
//
// Everything is always inlined: a vector path calls these helpers from a function compiled
// for its instruction set (a target attribute in kernels.cpp), which is where they get
// their machine code. So no function is ever called with a wide vector argument across
// instruction sets, and the compilers' -Wpsabi note about such calls (that their calling
// convention differs with and without AVX) is turned off for model/ (CMakeLists.txt).
#pragma once

#include <cstdint>
#include <cstring>

#include "numerics.hpp"

#define GPT2_LANES_INLINE [[gnu::always_inline]] inline

// Whether the AVX2 and AVX-512 paths exist (x86 only: target attributes and
// __builtin_cpu_supports).
#if defined(__x86_64__) || defined(__i386__)
#define GPT2_X86 1
#else
#define GPT2_X86 0
#endif

namespace gpt2::lanes {

using numerics::v16f;
using numerics::v4f;
using numerics::v8f;

// Floats in a vector V.
template <class V>
constexpr int width = sizeof(V) / sizeof(float);

template <class V>
GPT2_LANES_INLINE void load(V& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// The integer vectors beside V: as many 16-bit and 32-bit lanes as V has floats.
template <class V>
struct Bf16Lanes {
  static constexpr int n = sizeof(V) / sizeof(float);
  typedef uint16_t narrow __attribute__((vector_size(2 * n)));
  typedef uint32_t wide __attribute__((vector_size(4 * n)));
};

// width<V> bfloat16 values (the top halves of floats) widened into a vector: exact.
template <class V>
GPT2_LANES_INLINE void load(V& v, const uint16_t* p) {
  typename Bf16Lanes<V>::narrow h;
  std::memcpy(&h, p, sizeof h);
  const typename Bf16Lanes<V>::wide bits =
      __builtin_convertvector(h, typename Bf16Lanes<V>::wide) << 16;
  std::memcpy(&v, &bits, sizeof v);
}

template <class V>
GPT2_LANES_INLINE void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// Half of a float vector V, and the same lanes as doubles and as integers.
template <class V>
struct Half {
  static constexpr int bytes = sizeof(V) / 2;
  typedef float f __attribute__((vector_size(bytes)));
  typedef int32_t i32 __attribute__((vector_size(bytes)));
  typedef double d __attribute__((vector_size(2 * bytes)));
  typedef int64_t i64 __attribute__((vector_size(2 * bytes)));
};

// numerics.hpp's exp_core on each lane: e^y in double, for |y| <= 700 (a caller keeps the
// lanes it will not use in that range too).
template <class H>
GPT2_LANES_INLINE typename H::d exp_core_lanes(typename H::d y) {
  using I32 = typename H::i32;
  using I64 = typename H::i64;
  using D = typename H::d;
  const D t = y * numerics::LOG2E;
  // n: t rounded half away from zero, by truncating |t| + 0.5 (|t| < 2^31 here).
  const I32 pos = __builtin_convertvector(t >= 0.0, I32);
  const I32 m = __builtin_convertvector((t >= 0.0 ? t : -t) + 0.5, I32);
  const I32 n = pos ? m : -m;
  const D nd = __builtin_convertvector(n, D);
  const D p = numerics::exp_taylor(numerics::exp_reduced(y, nd));
  const I64 two_n_bits = (__builtin_convertvector(n, I64) + 1023) << 52;
  D two_n;
  std::memcpy(&two_n, &two_n_bits, sizeof two_n);
  return p * two_n;
}

// gpt2::exp on each lane of a half vector.
template <class H>
GPT2_LANES_INLINE typename H::f exp_half(typename H::f x) {
  using F = typename H::f;
  using D = typename H::d;
  const F zero = {}, inf = zero + __builtin_inff();
  const F inside = ((x >= -110.0f) & (x <= 89.0f)) ? x : zero;  // the lanes exp_core computes
  const F e = __builtin_convertvector(exp_core_lanes<H>(__builtin_convertvector(inside, D)), F);
  const F out = x > 89.0f ? inf : (x < -110.0f ? zero : e);
  return x != x ? x : out;  // NaN stays NaN
}

// gpt2::exp on each lane.
template <class V>
GPT2_LANES_INLINE V exp_lanes(V x) {
  using H = Half<V>;
  typename H::f half[2];
  std::memcpy(half, &x, sizeof x);
  half[0] = exp_half<H>(half[0]);
  half[1] = exp_half<H>(half[1]);
  V out;
  std::memcpy(&out, half, sizeof out);
  return out;
}

// gpt2::tanh on each lane of a half vector.
template <class H>
GPT2_LANES_INLINE typename H::f tanh_half(typename H::f x) {
  using D = typename H::d;
  const D xd = __builtin_convertvector(x, D);
  const D zero = {}, one = zero + 1.0;
  const D a = xd < 0.0 ? -xd : xd;
  // The three branches of gpt2::tanh; the exp one on an argument kept in 2^-6 .. 10.
  const D small = numerics::tanh_taylor(a);
  const D a_mid = ((a >= 0x1p-6) & (a <= 10.0)) ? a : one;
  const D mid = 1.0 - 2.0 / (exp_core_lanes<H>(2.0 * a_mid) + 1.0);
  const D t = a > 10.0 ? one : (a < 0x1p-6 ? small : mid);
  const typename H::f f = __builtin_convertvector(t, typename H::f);
  const typename H::f signed_f = x < 0.0f ? -f : f;
  return ((x != x) | (x == 0.0f)) ? x : signed_f;  // NaN stays NaN, +-0 keeps its sign
}

// gpt2::tanh on each lane.
template <class V>
GPT2_LANES_INLINE V tanh_lanes(V x) {
  using H = Half<V>;
  typename H::f half[2];
  std::memcpy(half, &x, sizeof x);
  half[0] = tanh_half<H>(half[0]);
  half[1] = tanh_half<H>(half[1]);
  V out;
  std::memcpy(&out, half, sizeof out);
  return out;
}

// kernels::gelu on each lane.
template <class V>
GPT2_LANES_INLINE V gelu_lanes(V x) {
  const V x3 = x * x * x;
  const V u = 0.7978845608f * (x + 0.044715f * x3);
  return 0.5f * x * (1.0f + tanh_lanes(u));
}

}  // namespace gpt2::lanes
