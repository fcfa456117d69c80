// Bindings for stage quantized-kv.
//
//   run_q8_blocks  input   {"values": [n_blocks, 32]}
//                  output  {"scales": [n_blocks] (each fp16 scale as its float value),
//                           "codes": [n_blocks, 32], "dequantized": [n_blocks, 32]}
//   run_q8_decode  input   {"weights", "tokens": [ids]}
//                  output  {"logits": [n_steps, vocab], the cache read back dequantized
//                           (cache_shapes, keys, values as layers_json), "work",
//                           "key_codes", "value_codes": [12, seq, 768],
//                           "key_scales", "value_scales": [12, seq, 24]}
#include <string>

#include "course/adapters.hpp"
#include "ops.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"

namespace course::stage_quantized_kv {

namespace {

// One side (keys or values) of every layer's blocks: codes [12, seq, 768] and scales
// [12, seq, 24], read through key_block / value_block. When the layers' lengths differ,
// flat [n] tensors of the same numbers, which the grader reports as a shape mismatch.
void blocks_json(const QuantizedModelCache& cache, bool keys, json& out) {
  const int seq = cache.layer(0).length();
  bool same_lengths = true;
  std::vector<float> codes, scales;
  for (int l = 0; l < cache.n_layers(); ++l) {
    const QuantizedKVCache& layer = cache.layer(l);
    same_lengths = same_lengths && layer.length() == seq;
    for (int p = 0; p < layer.length(); ++p)
      for (int b = 0; b < q8_row_blocks; ++b) {
        const Q8Block& block = keys ? layer.key_block(p, b) : layer.value_block(p, b);
        scales.push_back(gpt2::float_from_half(block.scale));
        for (int8_t c : block.codes) codes.push_back(float(c));
      }
  }
  const std::string side = keys ? "key" : "value";
  const int64_t n_codes = int64_t(codes.size()), n_scales = int64_t(scales.size());
  Tensor c = same_lengths ? make_tensor({cache.n_layers(), seq, 768}, {"layer", "pos", "feature"}, std::move(codes))
                          : make_tensor({n_codes}, {"index"}, std::move(codes));
  Tensor s = same_lengths
                 ? make_tensor({cache.n_layers(), seq, q8_row_blocks}, {"layer", "pos", "block"}, std::move(scales))
                 : make_tensor({n_scales}, {"index"}, std::move(scales));
  out[side + "_codes"] = tensor_to_json(c, TensorEncoding::base64);
  out[side + "_scales"] = tensor_to_json(s, TensorEncoding::base64);
}

// A tensor [rows, cols] of `data`, or flat [n] when data does not hold rows * cols values.
json rows_or_flat(std::vector<float> data, int64_t rows, int64_t cols, const char* row_axis,
                  const char* col_axis) {
  const int64_t n = int64_t(data.size());
  Tensor t = n == rows * cols ? (cols == 1 ? make_tensor({rows}, {row_axis}, std::move(data))
                                           : make_tensor({rows, cols}, {row_axis, col_axis}, std::move(data)))
                              : make_tensor({n}, {"index"}, std::move(data));
  return tensor_to_json(t, TensorEncoding::numbers);
}

}  // namespace

void register_adapters(AdapterTable& table) {
  table["run_q8_blocks"] = [](const json& input) {
    const Tensor values = tensor_field(input, "values");
    const int64_t n_blocks = values.shape.at(0);
    Q8Blocks run = run_q8_blocks(values.data);
    std::vector<float> scales, codes;
    for (uint16_t s : run.scales) scales.push_back(gpt2::float_from_half(s));
    for (int8_t c : run.codes) codes.push_back(float(c));
    json out;
    out["scales"] = rows_or_flat(std::move(scales), n_blocks, 1, "block", "");
    out["codes"] = rows_or_flat(std::move(codes), n_blocks, 32, "block", "value");
    out["dequantized"] = rows_or_flat(std::move(run.dequantized), n_blocks, 32, "block", "value");
    return out;
  };
  table["run_q8_decode"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    std::vector<int> tokens = tokens_field(input, "tokens", model, false);
    model.reset_work();
    Q8Run run = run_q8_decode(model, tokens);
    std::vector<KVCache> read_back;
    for (int l = 0; l < run.cache.n_layers(); ++l) read_back.push_back(run.cache.layer(l).dequantized());
    std::vector<const KVView*> layers;
    for (const KVCache& c : read_back) layers.push_back(&c);
    json out = layers_json(layers);
    out["logits"] = logits_json(run.logits, int64_t(tokens.size()), true, "step");
    out["work"] = work_json(model.work());
    blocks_json(run.cache, true, out);
    blocks_json(run.cache, false, out);
    return out;
  };
}

}  // namespace course::stage_quantized_kv
