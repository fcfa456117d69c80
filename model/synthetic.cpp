#include "synthetic.hpp"

#include "numerics.hpp"

namespace gpt2 {

namespace {

constexpr uint64_t GOLDEN = 0x9e3779b97f4a7c15ull;

inline uint64_t mix(uint64_t z) {
  z ^= z >> 30;
  z *= 0xbf58476d1ce4e5b9ull;
  z ^= z >> 27;
  z *= 0x94d049bb133111ebull;
  z ^= z >> 31;
  return z;
}

inline float amplitude(TensorKind kind) {
  switch (kind) {
    case TensorKind::matrix:
      return 0.0346f;
    case TensorKind::position:
      return 0.0173f;
    case TensorKind::norm_weight:
      return 0.1f;
    case TensorKind::norm_bias:
    case TensorKind::bias:
      return 0.0346f;
  }
  return 0.0f;
}

inline float unit_value(uint64_t h) {
  const int32_t u =
      static_cast<int32_t>((h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) + (h >> 48)) -
      131070;
  return static_cast<float>(u) * 0x1p-16f;  // exact
}

inline uint64_t tensor_key(uint64_t seed, int tensor_id) {
  return mix(seed + GOLDEN * (static_cast<uint64_t>(tensor_id) + 1));
}

// A matrix value with its low 16 bits cleared: a bfloat16, so that the model can keep the
// matrices in half the bytes and widen them exactly (DETERMINISM.md, "Synthetic weights").
inline float cut_to_bf16(float v) { return numerics::float_from_bits(numerics::float_bits(v) & 0xffff0000u); }

}  // namespace

float synthetic_value(uint64_t seed, int tensor_id, TensorKind kind, uint64_t index) {
  const float g = unit_value(mix(tensor_key(seed, tensor_id) + GOLDEN * (index + 1)));
  const float amp = amplitude(kind);
  if (kind == TensorKind::norm_weight) return 1.0f + g * amp;
  return kind == TensorKind::matrix ? cut_to_bf16(g * amp) : g * amp;
}

// The 16-bit sum u as a signed integer.
inline int32_t centred_sum(uint64_t h) {
  return static_cast<int32_t>((h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) +
                              (h >> 48)) -
         131070;
}

void synthetic_fill(uint64_t seed, int tensor_id, TensorKind kind, uint64_t begin, uint64_t end,
                    float* out) {
  const uint64_t key = tensor_key(seed, tensor_id);
  // (u * 2^-16) * amp == u * (amp * 2^-16) exactly: both scalings by 2^-16 are exact, so
  // the one rounding is of the same real number. One multiply instead of two.
  const float scaled_amp = amplitude(kind) * 0x1p-16f;
  const uint64_t n = end - begin;
  uint64_t z = key + GOLDEN * (begin + 1);
  if (kind == TensorKind::norm_weight) {
    for (uint64_t i = 0; i < n; ++i, z += GOLDEN) {
      out[i] = 1.0f + static_cast<float>(centred_sum(mix(z))) * scaled_amp;
    }
  } else if (kind == TensorKind::matrix) {
    for (uint64_t i = 0; i < n; ++i, z += GOLDEN) {
      out[i] = cut_to_bf16(static_cast<float>(centred_sum(mix(z))) * scaled_amp);
    }
  } else {
    for (uint64_t i = 0; i < n; ++i, z += GOLDEN) {
      out[i] = static_cast<float>(centred_sum(mix(z))) * scaled_amp;
    }
  }
}

std::vector<float> synthetic_tensor(uint64_t seed, const Config& config, const std::string& name) {
  for (const TensorSpec& spec : tensor_specs(config)) {
    if (spec.name != name) continue;
    std::vector<float> v(static_cast<size_t>(spec.numel()));
    synthetic_fill(seed, spec.id, spec.kind, 0, v.size(), v.data());
    return v;
  }
  throw ModelError("synthetic weights: no tensor named '" + name + "'");
}

}  // namespace gpt2
