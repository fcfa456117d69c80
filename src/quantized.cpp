// Your quantized cache: stage 11 (quantized-kv).
//
// The declarations, with the exact contract of each function, are in
// include/course/quantized.hpp; read it first: it gives the quantizer's float operations
// one by one, and the grader compares your codes, scales and logits with the reference's
// at atol = 0. The fp16 conversions are gpt2::half_from_float and gpt2::float_from_half
// (model/include/ops.hpp). decode_step_q8 is your stage 3 decode_step on this cache: the
// attention itself is your attend_one (course/decode.hpp), over the layer read back.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/quantized.hpp"

#include "course/decode.hpp"
#include "course/not_implemented.hpp"
#include "ops.hpp"

namespace course {

Q8Block quantize_q8_0(std::span<const float> x) {
  // x: [32]  one block's values
  // TODO: the block's fp16 scale and its 32 codes, in the header's float operations.
  (void)x;
  not_implemented("quantize_q8_0 (src/quantized.cpp)");
}

void dequantize_q8_0(const Q8Block& block, std::span<float> out) {
  // out: [32]
  // TODO: each code times the scale read back from fp16.
  (void)block;
  (void)out;
  not_implemented("dequantize_q8_0 (src/quantized.cpp)");
}

void QuantizedKVCache::append(std::span<const float> k, std::span<const float> v) {
  // k, v: [768] each; keys_ and values_ gain 24 blocks each
  // TODO: one more position: its key row and its value row, block by block.
  (void)k;
  (void)v;
  not_implemented("QuantizedKVCache::append (src/quantized.cpp)");
}

KVCache QuantizedKVCache::dequantized() const {
  // TODO: a float KVCache with every position read back, in position order.
  not_implemented("QuantizedKVCache::dequantized (src/quantized.cpp)");
}

std::vector<float> decode_step_q8(const gpt2::Model& model, QuantizedModelCache& cache, int token) {
  // x, q, k, v, attn: [1, d_model] each, as in decode_step; logits: [vocab]
  // TODO: decode_step, with each layer's k and v stored quantized and the attention over
  // that layer read back.
  (void)model;
  (void)cache;
  (void)token;
  not_implemented("decode_step_q8 (src/quantized.cpp)");
}

}  // namespace course
