// Seeded synthetic GPT-2 weights (DETERMINISM.md, "Synthetic weights").
//
// Every element is a pure function of (seed, tensor id, element index), so any element can
// be computed on its own, in any order, on any number of threads, with integer arithmetic
// and one float multiply (and one add for layer-norm gains), then for matrices a cut to
// bfloat16:
//
//   mix(z)  = splitmix64's finalizer: z ^= z >> 30; z *= 0xbf58476d1ce4e5b9;
//             z ^= z >> 27; z *= 0x94d049bb133111eb; z ^= z >> 31   (mod 2^64)
//   G       = 0x9e3779b97f4a7c15
//   key     = mix(seed + G * (tensor_id + 1))
//   h       = mix(key + G * (index + 1))            index: row-major, in the HF layout
//   u       = h[0:16] + h[16:32] + h[32:48] + h[48:64] - 131070   (four 16-bit fields)
//   g       = float(u) * 2^-16                      exact; in [-2, 2], mean 0, sd 0.577
//   value   = g * amp          for wpe and biases
//   value   = 1.0f + g * amp   for layer-norm gains
//   value   = bf16(g * amp)    for matrices: the float's low 16 bits cleared (toward zero),
//                              so every matrix value is exactly a bfloat16
//
// amp (float literals): matrices (wte, c_attn, c_proj, c_fc, mlp c_proj) 0.0346f, so
// sd 0.02 as in GPT-2's initialisation; wpe 0.0173f (sd 0.01); layer-norm gains 0.1f;
// layer-norm biases and Conv1D biases 0.0346f.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpt2.hpp"
#include "tensors.hpp"

namespace gpt2 {

// The value of element `index` of the tensor with this id and kind (see tensors.hpp).
float synthetic_value(uint64_t seed, int tensor_id, TensorKind kind, uint64_t index);

// Elements [begin, end) of one tensor into out[0 .. end-begin).
void synthetic_fill(uint64_t seed, int tensor_id, TensorKind kind, uint64_t begin, uint64_t end,
                    float* out);

// A whole tensor, by Hugging Face name, in the HF layout (wte as [vocab, d_model]).
// Throws ModelError for an unknown name.
std::vector<float> synthetic_tensor(uint64_t seed, const Config& config, const std::string& name);

}  // namespace gpt2
