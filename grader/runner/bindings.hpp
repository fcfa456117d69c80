// Bindings between fixture JSON and the adapters in include/course/adapters.hpp. They
// run inside a runner (next to the learner's code) and inside the fixture generator
// (next to the reference), never inside the grader.
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "course/batching.hpp"
#include "course/kvcache.hpp"
#include "gpt2.hpp"
#include "wire/tensor.hpp"

namespace course {

// The fixture input does not have the form the adapter needs (a bad fixture or a grader
// and runner from different versions), as opposed to an error in the learner's code.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using AdapterBinding = std::function<json(const json& input)>;
using AdapterTable = std::map<std::string, AdapterBinding>;

// Every adapter a runner serves, by name.
const AdapterTable& adapter_table();

// Each stage's adapters, registered by its own folder's stages/<folder>/grader/bindings.cpp
// (stage_<id>::register_adapters), in course order: the table CMake writes from
// stages/manifest.json (kvcourse_stage_table in cmake/Stages.cmake). An adapter belongs to
// the stage that introduces it; later stages use it too.
struct StageBindings {
  const char* slug;
  void (*register_adapters)(AdapterTable& table);
};
const std::vector<StageBindings>& stage_bindings();

// Shared state prepared before cases run (e.g. model weights). `setup` is the JSON of a
// setup request; an empty object is a no-op.
void run_setup(const json& setup);

// Helpers for the GPT-2 bindings (defined with the first stage's that runs GPT-2,
// stages/<folder>/grader/bindings.cpp).
// Token ids from input[name], each checked against the model's vocabulary.
std::vector<int> tokens_field(const json& input, const char* name, const gpt2::Model& model,
                              bool allow_empty);
// input[name] as a non-empty list of token lists, each as tokens_field reads it.
std::vector<std::vector<int>> token_lists(const json& input, const char* name, const gpt2::Model& model);
// input[name] as a tensor (wire/tensor.hpp); BadInput naming the field when it is not one.
Tensor tensor_field(const json& input, const char* name);
// An output buffer of n floats for the code under test, every one the quiet NaN
// kPoisonBits: code that adds into it before writing it, or leaves part of it unwritten,
// answers NaNs, where a zeroed buffer would have hidden the first and shown zeros.
std::vector<float> poisoned(size_t n);
// Logits as a tensor: [n_steps, vocab] when per_step (and the size agrees), else [n].
json logits_json(const std::vector<float>& logits, int64_t n_steps, bool per_step,
                 const char* row_axis = "step");
// {"cache_shapes", "keys", "values"} of a list of layers: 12 shape rows, and K and V as
// [n_layers, n_heads, seq, head_dim] read through key/value (a flat [n] "index" tensor when
// the layers' lengths differ).
json layers_json(const std::vector<const KVView*>& layers);
json cache_json(const ModelCache& cache);
// One layer's KVCache holding input's "keys" and "values" ([n, 768] each), appended in
// order: the cache of the attention probes and of read_kvcache.
KVCache probe_cache(const json& input);
// The rows one adapter call put through the model (gpt2::WorkCounts), for "work".
json work_json(const gpt2::WorkCounts& w);

// A prefix cache's block key as 16 hex digits (defined with stage prefix-cache's bindings,
// stages/08-prefix-cache/grader/bindings.cpp; stage prefix-hash's use it too).
std::string key_hex(uint64_t key);

// Helpers for the servers' bindings (defined with stage continuous-batching's,
// stages/09-continuous-batching/grader/bindings.cpp).
// input[name] as a whole number in [least, most]; BadInput naming it otherwise.
int int_field(const json& input, const char* name, int least, int most);
// input["requests"]: 1 to kMaxRequests of {"prompt", "max_new_tokens", "arrival"}.
std::vector<Request> requests_field(const json& input, const gpt2::Model& model);
// {"requests": [{"tokens", "logits": [max_new_tokens, vocab]}]}, by request id.
json served_json(const std::vector<Served>& served, const std::vector<Request>& requests);

// The demangled type of the exception being handled ("std::out_of_range"), for use inside
// a catch block; "unknown" outside one.
std::string current_exception_type();

// Helpers for the bindings.
Tensor make_tensor(std::vector<int64_t> shape, std::vector<std::string> axes, std::vector<float> data);
const json& field(const json& input, const char* name);  // throws BadInput if missing
std::vector<int> int_list(const json& value, const char* name);

}  // namespace course
