// Reference solution for src/quantized.cpp (stage quantized-kv).
#include "course/quantized.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "course/decode.hpp"
#include "ops.hpp"

namespace course {

Q8Block quantize_q8_0(std::span<const float> x) {
  if (x.size() != size_t(q8_block))
    throw std::invalid_argument("quantize_q8_0: a block is 32 values, not " + std::to_string(x.size()));
  float amax = 0.0f;
  for (float v : x) amax = std::fabs(v) > amax ? std::fabs(v) : amax;
  const float d = amax / 127.0f;
  const float inv = d != 0.0f ? 1.0f / d : 0.0f;
  Q8Block block;
  block.scale = gpt2::half_from_float(d);
  for (int i = 0; i < q8_block; ++i) {
    const float q = std::round(x[size_t(i)] * inv);  // halves away from zero
    block.codes[size_t(i)] = static_cast<int8_t>(q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q);
  }
  return block;
}

void dequantize_q8_0(const Q8Block& block, std::span<float> out) {
  if (out.size() != size_t(q8_block))
    throw std::invalid_argument("dequantize_q8_0: a block is 32 values, not " + std::to_string(out.size()));
  const float scale = gpt2::float_from_half(block.scale);
  for (int i = 0; i < q8_block; ++i) out[size_t(i)] = float(block.codes[size_t(i)]) * scale;
}

void QuantizedKVCache::append(std::span<const float> k, std::span<const float> v) {
  if (k.size() != size_t(d_model) || v.size() != size_t(d_model))
    throw std::invalid_argument("QuantizedKVCache::append: k and v hold 768 floats each");
  for (int b = 0; b < q8_row_blocks; ++b) {
    keys_.push_back(quantize_q8_0(k.subspan(size_t(b) * q8_block, q8_block)));
    values_.push_back(quantize_q8_0(v.subspan(size_t(b) * q8_block, q8_block)));
  }
  ++length_;
}

KVCache QuantizedKVCache::dequantized() const {
  KVCache cache;
  std::vector<float> k(d_model), v(d_model);  // one position's rows
  for (int p = 0; p < length_; ++p) {
    for (int b = 0; b < q8_row_blocks; ++b) {
      dequantize_q8_0(key_block(p, b), std::span<float>(k).subspan(size_t(b) * q8_block, q8_block));
      dequantize_q8_0(value_block(p, b), std::span<float>(v).subspan(size_t(b) * q8_block, q8_block));
    }
    cache.append(k, v);
  }
  return cache;
}

std::vector<float> decode_step_q8(const gpt2::Model& model, QuantizedModelCache& cache, int token) {
  if (token < 0 || token >= model.config().vocab)
    throw std::invalid_argument("token id " + std::to_string(token) + " is outside 0 .. " +
                                std::to_string(model.config().vocab - 1));
  const int pos = cache.layer(0).length();  // the new token's position
  std::vector<float> x(d_model);            // [1, d_model] residual stream
  std::vector<float> q(d_model), k(d_model), v(d_model);
  std::vector<float> attn(d_model);
  model.embed(&token, &pos, 1, x.data());
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), 1, q.data(), k.data(), v.data());
    cache.layer(l).append(k, v);  // quantized; the token attends to what the cache holds
    const KVCache read_back = cache.layer(l).dequantized();
    attend_one(q, read_back, attn);
    model.finish_block(l, attn.data(), 1, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab]
  model.logits(x.data(), 1, logits.data());
  return logits;
}

}  // namespace course
