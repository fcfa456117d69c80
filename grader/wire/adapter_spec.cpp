#include "wire/adapter_spec.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

namespace course {

namespace {

// A problem at a place inside a fixture's input ("input.plan[2].k").
struct BadField {
  std::string where, problem;
};

[[noreturn]] void bad(const std::string& where, const std::string& problem) { throw BadField{where, problem}; }

std::string at(const std::string& where, const char* name) { return where + "." + name; }
std::string at(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

const json& field(const json& object, const std::string& where, const char* name) {
  if (!object.is_object()) bad(where, "must be an object, not " + json_excerpt(object, 40));
  if (!object.contains(name)) bad(where, std::string("has no \"") + name + "\"");
  return object[name];
}

bool in_range(const json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return hi >= 0 && u <= uint64_t(hi) && (lo <= 0 || u >= uint64_t(lo));
  }
  return v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

void whole(const json& v, const std::string& where, int64_t lo, int64_t hi) {
  if (!in_range(v, lo, hi))
    bad(where, "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
                   json_excerpt(v, 40));
}

// A list of whole numbers in [lo, hi], at least min_size of them.
void whole_list(const json& v, const std::string& where, int64_t lo, int64_t hi, size_t min_size) {
  if (!v.is_array()) bad(where, "must be a list of whole numbers, not " + json_excerpt(v, 40));
  if (v.size() < min_size) bad(where, "must not be empty");
  for (size_t i = 0; i < v.size(); ++i) whole(v[i], at(where, i), lo, hi);
}

Tensor tensor_at(const json& v, const std::string& where) {
  try {
    return tensor_from_json(v);
  } catch (const TensorError& e) {
    bad(where, e.what());
  }
}

void model_dim_floats(const Tensor& t, const std::string& where) {
  if (t.data.size() != size_t(kInputModelDim))
    bad(where, "must hold " + std::to_string(kInputModelDim) + " floats, not " + std::to_string(t.data.size()));
}

// {"kind": "synthetic", "config": "gpt2-small", "seed": N}, optionally with "copy_token":
// {"from": A, "to": B} (two different token ids): what the decoding bindings build.
void check_weights(const json& w, const std::string& where) {
  if (field(w, where, "kind") != "synthetic") bad(at(where, "kind"), "must be \"synthetic\"");
  if (field(w, where, "config") != "gpt2-small") bad(at(where, "config"), "must be \"gpt2-small\"");
  whole(field(w, where, "seed"), at(where, "seed"), 0, INT64_MAX);
  if (w.is_object() && w.contains("copy_token")) {
    const std::string copy = at(where, "copy_token");
    const json& c = w["copy_token"];
    whole(field(c, copy, "from"), at(copy, "from"), 0, kInputVocab - 1);
    whole(field(c, copy, "to"), at(copy, "to"), 0, kInputVocab - 1);
    if (c["from"] == c["to"]) bad(copy, "must copy a token's row to another token");
  }
}

void check_tokens(const json& input, const char* name, const std::string& where) {
  whole_list(field(input, where, name), at(where, name), 0, kInputVocab - 1, 1);
}

// Stage cache-structure.
void check_cache_plan(const json& input) {
  const json& plan = field(input, "input", "plan");
  if (!plan.is_array()) bad("input.plan", "must be a list of steps");
  int64_t n_caches = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string where = at("input.plan", i);
    const json& op = field(plan[i], where, "op");
    if (op == "create") {
      ++n_caches;
      continue;
    }
    if (op != "append" && op != "clone" && op != "crop")
      bad(at(where, "op"), "must be \"create\", \"append\", \"clone\" or \"crop\", not " + json_excerpt(op, 40));
    if (n_caches == 0) bad(where, "names a cache before any was created");
    whole(field(plan[i], where, "cache"), at(where, "cache"), 0, n_caches - 1);
    if (op == "clone") {
      ++n_caches;
      continue;
    }
    if (op == "crop") {  // any n: a crop beyond the length is the case's point (it must throw)
      whole(field(plan[i], where, "n"), at(where, "n"), INT32_MIN, INT32_MAX);
      continue;
    }
    model_dim_floats(tensor_at(field(plan[i], where, "k"), at(where, "k")), at(where, "k"));
    model_dim_floats(tensor_at(field(plan[i], where, "v"), at(where, "v")), at(where, "v"));
  }
}

// Stage multi-layer-cache.
void check_layers(const json& input, const char* name) {
  whole_list(field(input, "input", name), at("input", name), 0, kInputLayers - 1, 0);
}

// The attention probes: one layer's [n, 768] keys and values; returns n.
int64_t check_probe_cache(const json& input) {
  const Tensor keys = tensor_at(field(input, "input", "keys"), "input.keys");
  const Tensor values = tensor_at(field(input, "input", "values"), "input.values");
  if (keys.shape.size() != 2 || keys.shape[1] != kInputModelDim || values.shape != keys.shape)
    bad("input", "\"keys\" and \"values\" must both be [n, 768]");
  return keys.shape[0];
}

void check_attend_one(const json& input) {
  check_probe_cache(input);
  model_dim_floats(tensor_at(field(input, "input", "q"), "input.q"), "input.q");
}

void check_attend_causal(const json& input) {
  const int64_t n = check_probe_cache(input);
  const Tensor q = tensor_at(field(input, "input", "q"), "input.q");
  if (q.shape.size() != 2 || q.shape[1] != kInputModelDim || q.shape[0] < 1 || q.shape[0] > n)
    bad("input.q", "must be [n_rows, 768] with 1 <= n_rows <= the cache's length (" + std::to_string(n) + ")");
}

// A non-empty list of non-empty token lists, as the decoding bindings' token_lists reads it.
void check_token_lists(const json& input, const char* name) {
  const json& lists = field(input, "input", name);
  const std::string where = at("input", name);
  if (!lists.is_array() || lists.empty()) bad(where, "must be a non-empty list of token lists");
  for (size_t i = 0; i < lists.size(); ++i) whole_list(lists[i], at(where, i), 0, kInputVocab - 1, 1);
}

// Stage one-token.
void check_token_run(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_tokens(input, "tokens", "input");
}

// Stage prefill: the prompt in chunks.
void check_chunked_run(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_token_lists(input, "chunks");
}

// Stage prefix-reuse.
void check_prefix_reuse(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_tokens(input, "prefix", "input");
  check_token_lists(input, "suffixes");
}

// Stage rollback: a prompt, then rounds of draft tokens, how many were accepted, and the
// token that follows them.
void check_speculative(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_tokens(input, "prompt", "input");
  const json& rounds = field(input, "input", "rounds");
  if (!rounds.is_array() || rounds.empty()) bad("input.rounds", "must be a non-empty list");
  for (size_t i = 0; i < rounds.size(); ++i) {
    const std::string where = at("input.rounds", i);
    const json& draft = field(rounds[i], where, "draft");
    whole_list(draft, at(where, "draft"), 0, kInputVocab - 1, 0);
    whole(field(rounds[i], where, "accepted"), at(where, "accepted"), 0, int64_t(draft.size()));
    whole(field(rounds[i], where, "next"), at(where, "next"), 0, kInputVocab - 1);
  }
}

// Stage paged-cache: a pool of one-layer blocks and a plan over its sequences.
void check_paged_plan(const json& input) {
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxPlanBlocks);
  const json& plan = field(input, "input", "plan");
  if (!plan.is_array()) bad("input.plan", "must be a list of steps");
  int64_t n_sequences = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string where = at("input.plan", i);
    const json& op = field(plan[i], where, "op");
    if (op == "create") {
      ++n_sequences;
      continue;
    }
    if (op != "append" && op != "fork" && op != "release")
      bad(at(where, "op"), "must be \"create\", \"append\", \"fork\" or \"release\", not " + json_excerpt(op, 40));
    if (n_sequences == 0) bad(where, "names a sequence before any was created");
    whole(field(plan[i], where, "sequence"), at(where, "sequence"), 0, n_sequences - 1);
    if (op == "fork") ++n_sequences;
    if (op != "append") continue;
    // An append of n positions (one grow(n)) carries n rows; "n" left out is 1.
    int64_t n = 1;
    if (plan[i].contains("n")) {
      whole(plan[i]["n"], at(where, "n"), 1, int64_t(kMaxPlanBlocks) * 16);  // 16 positions a block
      n = plan[i]["n"].get<int64_t>();
    }
    for (const char* name : {"k", "v"}) {
      const Tensor t = tensor_at(field(plan[i], where, name), at(where, name));
      if (n == 1) {
        model_dim_floats(t, at(where, name));
      } else if (t.data.size() != size_t(n) * size_t(kInputModelDim)) {
        bad(at(where, name),
            "must hold " + std::to_string(n) + " x " + std::to_string(kInputModelDim) +
                " floats (n = " + std::to_string(n) + "), not " + std::to_string(t.data.size()));
      }
    }
  }
}

// Stage paged-cache, with GPT-2: a prompt, then branches forked from it.
void check_paged_fork(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxModelBlocks);
  check_tokens(input, "prompt", "input");
  check_token_lists(input, "branches");
}

// Stage prefix-cache: prompts served in order through one prefix cache.
void check_prefix_trace(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxModelBlocks);
  const json& prompts = field(input, "input", "prompts");
  if (!prompts.is_array() || prompts.size() > size_t(kMaxRequests)) bad("input.prompts", "must be a list of 1 to " + std::to_string(kMaxRequests) + " prompts");
  check_token_lists(input, "prompts");
}

// Stage continuous-batching: requests with their arrival step and token budget.
void check_serve(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxModelBlocks);
  const json& requests = field(input, "input", "requests");
  if (!requests.is_array() || requests.empty() || requests.size() > size_t(kMaxRequests))
    bad("input.requests", "must be a list of 1 to " + std::to_string(kMaxRequests) + " requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string where = at("input.requests", i);
    whole_list(field(requests[i], where, "prompt"), at(where, "prompt"), 0, kInputVocab - 1, 1);
    whole(field(requests[i], where, "max_new_tokens"), at(where, "max_new_tokens"), 1, kMaxNewTokens);
    whole(field(requests[i], where, "arrival"), at(where, "arrival"), 0, kMaxArrival);
  }
}

// Stage generate: max_new_tokens, and `positions` tokens before it with every new token
// but the last, within the model's context.
void check_new_tokens(const json& input, int64_t positions) {
  const json& n = field(input, "input", "max_new_tokens");
  whole(n, "input.max_new_tokens", 1, kMaxNewTokens);
  if (positions + n.get<int64_t>() - 1 > kInputContext)
    bad("input", std::to_string(positions) + " prompt positions and " + std::to_string(n.get<int64_t>()) +
                     " new tokens do not fit in the model's " + std::to_string(kInputContext) + " positions");
}

void check_generate(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_tokens(input, "prompt", "input");
  check_new_tokens(input, int64_t(input["prompt"].size()));
}

void check_generate_from(const json& input) {
  check_weights(field(input, "input", "weights"), "input.weights");
  check_tokens(input, "prefix", "input");
  check_token_lists(input, "suffixes");
  const json& suffixes = input["suffixes"];
  if (suffixes.size() > size_t(kMaxRequests))
    bad("input.suffixes", "must be a list of 1 to " + std::to_string(kMaxRequests) + " token lists");
  size_t longest = 0;
  for (const json& s : suffixes) longest = std::max(longest, s.size());
  check_new_tokens(input, int64_t(input["prefix"].size() + longest));
}

using InputCheck = void (*)(const json& input);

// One entry per adapter of grader/runner/bindings_*.cpp.
const std::map<std::string, InputCheck>& input_checks() {
  static const std::map<std::string, InputCheck> table = {
      {"run_cache_plan", check_cache_plan},
      {"read_kvcache", [](const json& in) { check_probe_cache(in); }},
      {"run_model_cache_shapes", [](const json& in) { check_layers(in, "appends"); }},
      {"run_model_cache_clone",
       [](const json& in) {
         for (const char* name : {"before", "after_original", "after_clone"}) check_layers(in, name);
       }},
      {"attend_one", check_attend_one},
      {"run_decode", check_token_run},
      {"attend_causal", check_attend_causal},
      {"run_prefill", check_chunked_run},
      {"run_prefix_reuse", check_prefix_reuse},
      {"run_speculative", check_speculative},
      {"run_paged_plan", check_paged_plan},
      {"run_paged_fork", check_paged_fork},
      {"run_prefix_trace", check_prefix_trace},
      {"run_serve", check_serve},
      {"run_generate", check_generate},
      {"run_generate_from", check_generate_from},
  };
  return table;
}

std::string adapter_names() {
  std::string names;
  for (const auto& [name, check] : input_checks()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

std::vector<std::string> served_adapters() {
  std::vector<std::string> names;
  for (const auto& [name, check] : input_checks()) names.push_back(name);
  return names;
}

void check_adapter_input(const std::string& adapter, const json& input) {
  auto it = input_checks().find(adapter);
  if (it == input_checks().end())
    throw AdapterInputError("adapter " + json_excerpt(json(adapter), 60) +
                            " is not one the runners serve (they serve " + adapter_names() + ")");
  try {
    it->second(input);
  } catch (const BadField& b) {
    throw AdapterInputError(b.where + ": " + b.problem + " (adapter " + adapter + ")");
  }
}

bool has_adapter_spec(const std::string& adapter) { return input_checks().count(adapter) > 0; }

std::string setup_problem(const json& setup) {
  if (!setup.is_object()) return "must be an object";
  for (auto it = setup.begin(); it != setup.end(); ++it) {
    if (it.key() != "weights")
      return json_excerpt(json(it.key()), 40) + " is nothing a runner prepares (a setup holds only \"weights\")";
    try {
      check_weights(it.value(), "weights");
    } catch (const BadField& b) {
      return b.where + ": " + b.problem;
    }
  }
  return "";
}

}  // namespace course
