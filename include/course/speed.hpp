// Stage 14 (speed): your generation, timed. A decode step must read every weight of the
// model once (248 MB of bfloat16 matrices and some floats) and every key and value the
// cache holds (2 x 12 layers x 768 floats a position): its speed is bound by the memory's,
// not by the arithmetic. The grader times your generate_greedy (stage 10, with your
// KVCache of stage 1 and your attention of stages 3 and 4) after a long past, and, in the
// same run, the model's own cached loop on the same input (model/generate.hpp: extend),
// one after the other, once per timed case; the stage passes when your tokens per
// CPU-second are at least 0.5 of the model loop's (the median of the pairs'
// ratios: judge/speed.hpp). The numbers must still be the reference's, bit for bit.
//
// The past: a case starts from a cache that already holds `past` positions whose keys and
// values are made up, not computed by the model: past_value gives them, the same for your
// cache and the model's. Then the case's prompt goes in after them and new tokens follow,
// exactly as stage 10 states (generate_greedy on a cache that is not empty).
// This header is given: leave it as it is.
#pragma once

#include <cstdint>

#include "course/kvcache.hpp"

namespace course {

// The most positions a speed case's past may hold (GPT-2 small's context is 1024, and the
// prompt and the new tokens come after the past).
inline constexpr int kMaxSpeedPast = 960;

// The value of float `i` (0 .. 767) of the key (is_value false) or the value (true) of
// layer `layer` at position `pos` of a made-up past, for `seed`: a number in [-2, 2) with
// 16 significant bits, from a hash of the five integers (splitmix64's finalizer).
inline float past_value(uint64_t seed, int layer, int pos, int i, bool is_value) {
  uint64_t z = seed;
  z = z * 0x9e3779b97f4a7c15ull + uint64_t(layer);
  z = z * 0x9e3779b97f4a7c15ull + uint64_t(pos);
  z = z * 0x9e3779b97f4a7c15ull + uint64_t(i) * 2 + (is_value ? 1 : 0);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  // The top 16 bits as an integer in [-32768, 32768), times 2^-14: exact in a float.
  return float(int32_t(z >> 48) - 32768) * (1.0f / 16384.0f);
}

// Appends `past` made-up positions to every layer of an empty cache, position by
// position, with its layers' append (yours: KVCache's, or stage 15's WindowedLayer's).
// Given, not graded.
template <typename Cache>
void fill_past(Cache& cache, int past, uint64_t seed) {
  float k[d_model], v[d_model];
  for (int pos = 0; pos < past; ++pos)
    for (int l = 0; l < n_layers; ++l) {
      for (int i = 0; i < d_model; ++i) {
        k[i] = past_value(seed, l, pos, i, false);
        v[i] = past_value(seed, l, pos, i, true);
      }
      cache.layer(l).append(k, v);
    }
}

}  // namespace course
