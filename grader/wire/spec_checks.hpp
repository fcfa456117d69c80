// The pieces an adapter's spec is written with (wire/adapter_spec.hpp). Each stage that
// introduces an adapter states its input and output forms in its own folder
// (stages/<folder>/grader/spec.cpp) with these checks; a check that fails throws BadField,
// which check_adapter_input turns into "input.plan[2].k: must hold 768 floats, not 5
// (adapter run_cache_plan)", and check_adapter_output into "output: has no \"logits\"".
#pragma once

#include <cstdint>
#include <string>

#include "wire/adapter_spec.hpp"

namespace course::spec {

// A problem at a place inside a fixture's input ("input.plan[2].k").
struct BadField {
  std::string where, problem;
};
[[noreturn]] void bad(const std::string& where, const std::string& problem);

// "input.plan", "input.plan[2]": the place of a member or an element, for messages.
std::string at(const std::string& where, const char* name);
std::string at(const std::string& where, size_t i);

// object[name], or BadField when `object` is not an object or has no such member.
const json& field(const json& object, const std::string& where, const char* name);

// A whole number in [lo, hi].
void whole(const json& v, const std::string& where, int64_t lo, int64_t hi);
// A list of whole numbers in [lo, hi], at least min_size of them.
void whole_list(const json& v, const std::string& where, int64_t lo, int64_t hi, size_t min_size);

// A tensor (wire/tensor.hpp), and one of exactly 768 floats (one position's row).
Tensor tensor_at(const json& v, const std::string& where);
void model_dim_floats(const Tensor& t, const std::string& where);

// The GPT-2 adapters' shared members:
// {"kind": "synthetic", "config": "gpt2-small", "seed": N}, optionally with "copy_token":
// {"from": A, "to": B} (two different token ids).
void check_weights(const json& w, const std::string& where);
// input.weights, as every GPT-2 adapter takes it.
void check_input_weights(const json& input);
// input[name]: a non-empty list of token ids.
void check_tokens(const json& input, const char* name, const std::string& where);
// input[name]: a non-empty list of non-empty token lists.
void check_token_lists(const json& input, const char* name);
// input.n_blocks of a GPT-2 block pool.
void check_model_blocks(const json& input);
// input.requests of a server (stages continuous-batching, chunked-prefill): 1 to
// kMaxRequests of {"prompt": [ids], "max_new_tokens", "arrival"}.
void check_requests(const json& input);
// One layer's [n, 768] keys and values (the attention probes, read_kvcache); returns n.
int64_t check_probe_cache(const json& input);
// input.max_new_tokens, and `positions` tokens before it with every new token but the last,
// within the model's context.
void check_new_tokens(const json& input, int64_t positions);

// ---- Outputs. A member of an output object (field, above), by kind. A tensor is one in full or a digest
// of it (wire/digest.hpp: a fixture keeps the large ones so); its contents are checked
// where it is read (wire/fixture.cpp, judge/compare.cpp), not here.
void tensor_member(const json& object, const std::string& where, const char* name);
void int_member(const json& object, const std::string& where, const char* name);
void string_member(const json& object, const std::string& where, const char* name);
// A list, possibly empty, of whole numbers or of strings.
void int_list_member(const json& object, const std::string& where, const char* name);
void string_list_member(const json& object, const std::string& where, const char* name);
// A check of a value at its place ("output.continued[1]").
using FormCheck = void (*)(const json& value, const std::string& where);
// A list of shape rows, each three whole numbers ([n_heads, length, head_dim]).
void shape_rows(const json& value, const std::string& where);
void shape_rows_member(const json& object, const std::string& where, const char* name);
// A list (possibly empty) whose every element is checked by `each` at its place.
void list_member(const json& object, const std::string& where, const char* name, FormCheck each);
// A member checked by `check` at its place.
void object_member(const json& object, const std::string& where, const char* name, FormCheck check);

// The GPT-2 outputs' shared members: a model cache read back ("cache_shapes", "keys",
// "values"), and the work counts ("work": "qkv_rows", "finish_block_rows",
// "forward_tokens").
void cache_members(const json& object, const std::string& where);
void work_member(const json& object, const std::string& where);
// A server's "requests" (stages continuous-batching, chunked-prefill): each request's
// "tokens" and the "logits" they were chosen from.
void served_requests_member(const json& output);
// A GPT-2 run's output (decode, prefill, generation): its cache, its "logits" and its work.
void gpt2_run_output(const json& output);
// An attention probe's output: {"out": a tensor}.
void probe_output(const json& output);

}  // namespace course::spec
