#include "tensors.hpp"

#include <string>

namespace gpt2 {

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void validate_config(const Config& c) {
  auto bad = [&](const std::string& why) {
    throw ModelError("invalid GPT-2 config (n_layer " + std::to_string(c.n_layer) + ", n_head " +
                     std::to_string(c.n_head) + ", head_dim " + std::to_string(c.head_dim) +
                     ", d_model " + std::to_string(c.d_model) + ", n_ctx " +
                     std::to_string(c.n_ctx) + ", vocab " + std::to_string(c.vocab) + "): " + why);
  };
  if (c.n_layer < 1 || c.n_head < 1 || c.head_dim < 1 || c.d_model < 1 || c.n_ctx < 1 ||
      c.vocab < 1) {
    bad("every field must be at least 1");
  }
  if (static_cast<int64_t>(c.n_head) * c.head_dim != c.d_model) {
    bad("d_model must equal n_head * head_dim");
  }
  const int64_t limit = int64_t{1} << 31;
  if (static_cast<int64_t>(c.d_model) * 4 * c.d_model >= limit ||
      static_cast<int64_t>(c.vocab) * c.d_model >= limit ||
      static_cast<int64_t>(c.n_ctx) * c.d_model >= limit || c.n_layer > 10000) {
    bad("too large");
  }
}

std::vector<TensorSpec> tensor_specs(const Config& c) {
  validate_config(c);
  const int64_t d = c.d_model;
  std::vector<TensorSpec> specs;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, TensorKind kind) {
    TensorSpec s;
    s.id = static_cast<int>(specs.size());
    s.name = name;
    s.shape = std::move(shape);
    s.kind = kind;
    specs.push_back(std::move(s));
  };
  add("wte.weight", {c.vocab, d}, TensorKind::matrix);
  add("wpe.weight", {c.n_ctx, d}, TensorKind::position);
  add("ln_f.weight", {d}, TensorKind::norm_weight);
  add("ln_f.bias", {d}, TensorKind::norm_bias);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {d}, TensorKind::norm_weight);
    add(h + "ln_1.bias", {d}, TensorKind::norm_bias);
    add(h + "attn.c_attn.weight", {d, 3 * d}, TensorKind::matrix);
    add(h + "attn.c_attn.bias", {3 * d}, TensorKind::bias);
    add(h + "attn.c_proj.weight", {d, d}, TensorKind::matrix);
    add(h + "attn.c_proj.bias", {d}, TensorKind::bias);
    add(h + "ln_2.weight", {d}, TensorKind::norm_weight);
    add(h + "ln_2.bias", {d}, TensorKind::norm_bias);
    add(h + "mlp.c_fc.weight", {d, 4 * d}, TensorKind::matrix);
    add(h + "mlp.c_fc.bias", {4 * d}, TensorKind::bias);
    add(h + "mlp.c_proj.weight", {4 * d, d}, TensorKind::matrix);
    add(h + "mlp.c_proj.bias", {d}, TensorKind::bias);
  }
  return specs;
}

}  // namespace gpt2
