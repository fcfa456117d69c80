// Small internal helpers shared by the model's .cpp files: float bit access, a 4-float
// vector type, and the exact midpoint test behind attention_scale. Not part of the API a
// learner uses.
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

inline v4f load4(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store4(float* p, v4f v) { std::memcpy(p, &v, sizeof v); }

inline v4f splat4(float s) { return v4f{s, s, s, s}; }

}  // namespace gpt2::numerics
