// Bindings of stage one-token's adapters: the attention probe (attend_one) and the GPT-2
// decode (run_decode); and what every GPT-2 binding shares (runner/bindings.hpp,
// runner/weights.hpp): the model each case's weights name, built or mapped once per runner.
//
// Every case input names its weights ({"weights": {...}}, see weights.hpp); the stage's
// setup request names the same weights, so the model is built once per runner process,
// before the first case, with the setup's longer time allowance.
//
// Outputs are full tensors (the fixture may hold a digest of them, digest.hpp):
//   logits        [n_steps, vocab] (run_decode; the later stages' runs say theirs)
//   cache_shapes  12 shape rows [n_heads, length, head_dim], layer 0 first
//   keys, values  [n_layers, n_heads, seq, head_dim] read through KVCache::key/value,
//                 or a flat [n] "index" tensor when the layers' lengths differ
//   work          the rows the adapter call put through the model (gpt2::WorkCounts):
//                 {"embed_rows", "qkv_rows": [n_layers], "finish_block_rows": [n_layers],
//                  "logits_rows", "forward_tokens"}
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "synthetic_file.hpp"

namespace course {

namespace {

std::unique_ptr<gpt2::Model> g_model;
std::string g_model_spec;
// A model derived from g_model for a spec with "copy_token" (two tokens tied: the case of
// a greedy rule on ties), kept beside it; it reads g_model's weights.
std::unique_ptr<gpt2::Model> g_variant;
std::string g_variant_spec;
// The synthetic weights as a file, named by the stage's setup ("weights_file"): mapped
// read-only instead of generated (the same bits: gpt2::map_synthetic_file).
std::string g_weights_file;
// Threads for the model's products (0: the model's default, every core). A stage's setup
// sets 1: a runner computes on one thread, so that no core spins waiting for another
// between the many small products of a decode step (model/threads.hpp), and the CPU time
// a case costs is its work alone. The bits do not depend on it (model/DETERMINISM.md).
int g_model_threads = 0;



}  // namespace

// The rows one adapter call put through the model.
json work_json(const gpt2::WorkCounts& w) {
  return {{"embed_rows", w.embed},
          {"qkv_rows", w.qkv},
          {"finish_block_rows", w.finish_block},
          {"logits_rows", w.logits},
          {"forward_tokens", w.forward}};
}

std::vector<int> tokens_field(const json& input, const char* name, const gpt2::Model& model,
                              bool allow_empty) {
  std::vector<int> tokens = int_list(field(input, name), name);
  if (tokens.empty() && !allow_empty) throw BadInput(std::string("\"") + name + "\" is empty");
  for (int t : tokens)
    if (t < 0 || t >= model.config().vocab)
      throw BadInput(std::string("\"") + name + "\" holds token id " + std::to_string(t));
  return tokens;
}

json logits_json(const std::vector<float>& logits, int64_t n_steps, bool per_step, const char* row_axis) {
  const int64_t vocab = n_steps > 0 ? int64_t(logits.size()) / n_steps : 0;
  Tensor t;
  if (per_step && n_steps > 0 && int64_t(logits.size()) == n_steps * vocab) {
    t = make_tensor({n_steps, vocab}, {row_axis, "vocab"}, logits);
  } else {
    t = make_tensor({int64_t(logits.size())}, {"vocab"}, logits);
  }
  return tensor_to_json(t, TensorEncoding::base64);
}

json layers_json(const std::vector<const KVView*>& layers) {
  const int count = int(layers.size());
  json rows = json::array();
  for (const KVView* layer : layers) rows.push_back({n_heads, layer->length(), head_dim});
  int len = count > 0 ? layers[0]->length() : 0;
  bool uniform = true;
  for (int l = 1; l < count; ++l) uniform = uniform && layers[size_t(l)]->length() == len;
  std::vector<float> keys, values;  // [n_layers, n_heads, seq, head_dim] when uniform
  for (int l = 0; l < count; ++l) {
    const KVView& layer = *layers[size_t(l)];
    for (int h = 0; h < n_heads; ++h)
      for (int p = 0; p < layer.length(); ++p) {
        auto k = layer.key(h, p);
        auto v = layer.value(h, p);
        keys.insert(keys.end(), k.begin(), k.end());
        values.insert(values.end(), v.begin(), v.end());
      }
  }
  auto tensor = [&](std::vector<float> data) {
    const int64_t n = int64_t(data.size());
    Tensor t = uniform ? make_tensor({count, n_heads, len, head_dim},
                                     {"layer", "head", "pos", "dim"}, std::move(data))
                       : make_tensor({n}, {"index"}, std::move(data));
    return tensor_to_json(t, TensorEncoding::base64);
  };
  return {{"cache_shapes", rows},
          {"keys", tensor(std::move(keys))},
          {"values", tensor(std::move(values))}};
}

json cache_json(const ModelCache& cache) {
  std::vector<const KVView*> layers;
  for (int l = 0; l < n_layers; ++l) layers.push_back(&cache.layer(l));
  return layers_json(layers);
}

KVCache probe_cache(const json& input) {
  Tensor keys = tensor_field(input, "keys"), values = tensor_field(input, "values");
  if (keys.shape.size() != 2 || keys.shape[1] != d_model || values.shape != keys.shape)
    throw BadInput("\"keys\" and \"values\" must both be [n, 768]");
  KVCache cache;
  for (int64_t p = 0; p < keys.shape[0]; ++p)
    cache.append(std::span<const float>(keys.data).subspan(size_t(p) * d_model, d_model),
                 std::span<const float>(values.data).subspan(size_t(p) * d_model, d_model));
  return cache;
}

namespace {

// A synthetic GPT-2 small of `weights` without its "copy_token" (what the stage's setup
// names, mapped from the weights file when there is one).
const gpt2::Model& base_model_for(const json& weights) {
  json base = weights;
  if (base.is_object()) base.erase("copy_token");
  const std::string spec = base.dump();
  if (g_model && spec == g_model_spec) return *g_model;
  if (!base.is_object() || base.value("kind", "") != "synthetic" ||
      base.value("config", "") != "gpt2-small" || !base.contains("seed") ||
      !base["seed"].is_number_integer() || base["seed"].get<int64_t>() < 0)
    throw BadInput(
        "this runner builds only {\"kind\": \"synthetic\", \"config\": \"gpt2-small\", \"seed\": "
        "N} weights (optionally with \"copy_token\": {\"from\": A, \"to\": B}), not " +
        weights.dump());
  g_variant.reset();  // it reads the old weights
  g_variant_spec.clear();
  g_model.reset();  // free the old weights first: one GPT-2 small is about 250 MB
  const uint64_t seed = base["seed"].get<uint64_t>();
  g_model = std::make_unique<gpt2::Model>(g_weights_file.empty()
                                              ? gpt2::Model::synthetic(seed)
                                              : gpt2::map_synthetic_file(g_weights_file, seed));
  if (g_model_threads > 0) g_model->set_threads(g_model_threads);
  g_model_spec = spec;
  return *g_model;
}

}  // namespace

const gpt2::Model& model_for(const json& weights) {
  if (!weights.is_object() || !weights.contains("copy_token")) return base_model_for(weights);
  const gpt2::Model& base = base_model_for(weights);
  const std::string spec = weights.dump();
  if (g_variant && spec == g_variant_spec) return *g_variant;
  const json& copy = weights["copy_token"];
  const int vocab = base.config().vocab;
  auto token = [&](const char* name) {
    if (!copy.is_object() || !copy.contains(name) || !copy[name].is_number_integer() ||
        copy[name].get<int64_t>() < 0 || copy[name].get<int64_t>() >= vocab)
      throw BadInput("\"copy_token\" must be {\"from\": A, \"to\": B} with token ids below " +
                     std::to_string(vocab));
    return copy[name].get<int>();
  };
  const int from = token("from"), to = token("to");
  g_variant.reset();
  // From the weights file: a mapping of its own with only that row's pages copied;
  // otherwise a copy of the base model's wte.
  g_variant = std::make_unique<gpt2::Model>(
      g_weights_file.empty() ? base.with_token_row_copied(from, to)
                             : gpt2::map_synthetic_file_with_token_row_copied(
                                   g_weights_file, weights["seed"].get<uint64_t>(), from, to));
  if (g_model_threads > 0) g_variant->set_threads(g_model_threads);
  g_variant_spec = spec;
  return *g_variant;
}

void run_setup(const json& setup) {
  if (!setup.is_object()) return;
  if (setup.contains("weights_file") && setup["weights_file"].is_string())
    g_weights_file = setup["weights_file"];
  g_model_threads = 1;
  if (g_model) g_model->set_threads(g_model_threads);
  if (g_variant) g_variant->set_threads(g_model_threads);
  if (setup.contains("weights")) model_for(setup["weights"]);
}

std::vector<std::vector<int>> token_lists(const json& input, const char* name,
                                          const gpt2::Model& model) {
  const json& list = field(input, name);
  if (!list.is_array() || list.empty())
    throw BadInput(std::string("\"") + name + "\" must be a non-empty list of token lists");
  std::vector<std::vector<int>> out;
  for (const json& s : list) out.push_back(tokens_field(json{{"tokens", s}}, "tokens", model, false));
  return out;
}

Tensor tensor_field(const json& input, const char* name) {
  try {
    return tensor_from_json(field(input, name));
  } catch (const TensorError& e) {
    throw BadInput(std::string("\"") + name + "\": " + e.what());
  }
}

// An output buffer handed to the code under test, every float the poison kPoisonBits (a
// quiet NaN): code that adds into it before writing it, or leaves some of it unwritten,
// answers NaNs, where a zeroed buffer would have hidden the first and shown zeros.
constexpr uint32_t kPoisonBits = 0x7fc0dead;
std::vector<float> poisoned(size_t n) {
  float poison;
  std::memcpy(&poison, &kPoisonBits, sizeof poison);
  return std::vector<float>(n, poison);
}

namespace stage_one_token {

void register_adapters(AdapterTable& table) {
  // Stage one-token.
  table["attend_one"] = [](const json& input) {
    KVCache cache = probe_cache(input);
    Tensor q = tensor_field(input, "q");
    if (q.data.size() != size_t(d_model)) throw BadInput("\"q\" must hold 768 floats");
    std::vector<float> out = poisoned(d_model);  // [n_heads, head_dim]
    attend_one(q.data, cache, out);
    return json{{"out", tensor_to_json(make_tensor({n_heads, head_dim}, {"head", "dim"}, out),
                                       TensorEncoding::base64)}};
  };
  table["run_decode"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    std::vector<int> tokens = tokens_field(input, "tokens", model, false);
    model.reset_work();
    CacheRun run = run_decode(model, tokens);
    json out = cache_json(run.cache);
    out["logits"] = logits_json(run.logits, int64_t(tokens.size()), true, "step");
    out["work"] = work_json(model.work());
    return out;
  };
}

}  // namespace stage_one_token

}  // namespace course
