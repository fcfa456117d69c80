// The tensors of a GPT-2 model, by their Hugging Face names, in one canonical order.
//
// The id of a tensor is its index in tensor_specs(): the synthetic weights are seeded by
// it (synthetic.hpp) and the safetensors reader and writer use the names and shapes.
//
//   id            name                          shape
//   0             wte.weight                    [vocab, d_model]     token embedding
//   1             wpe.weight                    [n_ctx, d_model]     position embedding
//   2             ln_f.weight                   [d_model]
//   3             ln_f.bias                     [d_model]
//   4 + 12 l + 0  h.{l}.ln_1.weight             [d_model]
//   4 + 12 l + 1  h.{l}.ln_1.bias               [d_model]
//   4 + 12 l + 2  h.{l}.attn.c_attn.weight      [d_model, 3 d_model] (Conv1D: [in, out])
//   4 + 12 l + 3  h.{l}.attn.c_attn.bias        [3 d_model]          (q | k | v)
//   4 + 12 l + 4  h.{l}.attn.c_proj.weight      [d_model, d_model]
//   4 + 12 l + 5  h.{l}.attn.c_proj.bias        [d_model]
//   4 + 12 l + 6  h.{l}.ln_2.weight             [d_model]
//   4 + 12 l + 7  h.{l}.ln_2.bias               [d_model]
//   4 + 12 l + 8  h.{l}.mlp.c_fc.weight         [d_model, 4 d_model]
//   4 + 12 l + 9  h.{l}.mlp.c_fc.bias           [4 d_model]
//   4 + 12 l + 10 h.{l}.mlp.c_proj.weight       [4 d_model, d_model]
//   4 + 12 l + 11 h.{l}.mlp.c_proj.bias         [d_model]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpt2.hpp"

namespace gpt2 {

// What a tensor is, which decides the scale of its synthetic values.
enum class TensorKind {
  matrix,       // wte and the four Conv1D weights
  position,     // wpe
  norm_weight,  // layer-norm gains (near 1)
  norm_bias,    // layer-norm biases
  bias,         // Conv1D biases
};

struct TensorSpec {
  int id = 0;
  std::string name;            // Hugging Face name, without a "transformer." prefix
  std::vector<int64_t> shape;  // row-major
  TensorKind kind = TensorKind::matrix;

  int64_t numel() const;
};

// Every tensor of the model, ordered by id. Throws ModelError for an invalid config.
std::vector<TensorSpec> tensor_specs(const Config& config);

// Throws ModelError unless every field is positive, d_model == n_head * head_dim and the
// largest tensor has fewer than 2^31 elements.
void validate_config(const Config& config);

// Number of tensors per layer and the id of the first layer tensor.
constexpr int TENSORS_PER_LAYER = 12;
constexpr int FIRST_LAYER_TENSOR = 4;

}  // namespace gpt2
