// Stage 11 (quantized-kv): a KV cache that stores its keys and values as q8_0, the 8-bit
// format of llama.cpp's caches: blocks of 32 values, each block one fp16 scale and 32
// signed 8-bit codes, 34 bytes where floats take 128.
//
// The quantizer, exactly (llama.cpp's reference quantize_row_q8_0, in these float
// operations; every one is IEEE single precision, round to nearest even):
//
//   amax  = the largest |x[i]| of the block's 32 values (0 if all are 0)
//   d     = amax / 127.0f                      a division
//   inv   = d != 0 ? 1.0f / d : 0.0f           a division
//   scale = gpt2::half_from_float(d)           fp16, round to nearest even (ops.hpp)
//   q[i]  = round(x[i] * inv), halves away from zero (std::round), then clamped to
//           [-127, 127] (within the input's range below the clamp never changes a
//           code, but keep it)
//
// and dequantizing, exactly:
//
//   y[i]  = float(q[i]) * gpt2::float_from_half(scale)
//
// which is exact: a code has at most 7 significant bits and a half 11, so the product
// fits in a float's 24. The codes are made with inv, from d as a float; the block keeps
// only the fp16 scale, so the values read back are q[i] times the rounded scale.
//
// Input: finite values whose amax is 0 or from 2^-100 to 127 * 65504 (so that 1 / d is
// finite and d fits in fp16); a cache's keys and values are far inside that. A block
// whose d rounds to an fp16 subnormal keeps fewer significant bits in its scale; one
// whose d is at most 2^-25 (about 3e-8) keeps a scale of 0: its codes are still
// computed, and it reads back as zeros.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "course/kvcache.hpp"
#include "gpt2.hpp"

namespace course {

inline constexpr int q8_block = 32;                 // values per block
inline constexpr int q8_row_blocks = 768 / q8_block;  // blocks per cached row: 24, 2 per head

// One q8_0 block: llama.cpp's block_q8_0 (2 + 32 bytes).
struct Q8Block {
  uint16_t scale = 0;                // fp16 bits: gpt2::half_from_float(amax / 127)
  std::array<int8_t, q8_block> codes{};
};

// Quantizes x (exactly 32 values) as the header's comment says. Throws
// std::invalid_argument unless x.size() == 32.
Q8Block quantize_q8_0(std::span<const float> x);

// out[i] = float(block.codes[i]) * gpt2::float_from_half(block.scale), for the 32 values.
// Throws std::invalid_argument unless out.size() == 32.
void dequantize_q8_0(const Q8Block& block, std::span<float> out);

// One layer's cache, quantized: each position's key row and value row (768 floats each)
// kept as 24 blocks, block b holding the row's values b*32 .. b*32+31 (so head h is
// blocks 2h and 2h+1). Nothing of the floats is kept.
class QuantizedKVCache {
 public:
  // Adds one position: k and v (768 floats each) quantized block by block.
  void append(std::span<const float> k, std::span<const float> v);

  // Positions stored.
  int length() const { return length_; }

  // Position pos's block b of the key row (of the value row), for 0 <= pos < length() and
  // 0 <= b < 24. Given: what the grader reads.
  const Q8Block& key_block(int pos, int b) const { return keys_.at(size_t(pos) * q8_row_blocks + size_t(b)); }
  const Q8Block& value_block(int pos, int b) const { return values_.at(size_t(pos) * q8_row_blocks + size_t(b)); }

  // A float cache holding every position dequantized, in order: what attention reads.
  KVCache dequantized() const;

 private:
  std::vector<Q8Block> keys_;    // [seq, 24]: position p's row is blocks p*24 .. p*24+23
  std::vector<Q8Block> values_;  // [seq, 24]
  int length_ = 0;
};

// The quantized cache of all 12 layers. Given.
class QuantizedModelCache {
 public:
  QuantizedModelCache() : layers_(12) {}
  int n_layers() const { return int(layers_.size()); }
  QuantizedKVCache& layer(int l) { return layers_.at(size_t(l)); }
  const QuantizedKVCache& layer(int l) const { return layers_.at(size_t(l)); }

 private:
  std::vector<QuantizedKVCache> layers_;
};

// One decode step on a quantized cache: stage 3's decode_step, except that each layer's
// new key and value go into its QuantizedKVCache (quantized), and the token attends over
// that layer's whole cache read back dequantized, its own position included: what it
// attends to is what the cache holds. Returns the new position's logits ([vocab]).
std::vector<float> decode_step_q8(const gpt2::Model& model, QuantizedModelCache& cache, int token);

}  // namespace course
