#include "wire/adapter_spec.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "wire/spec_checks.hpp"

namespace course {

namespace spec {

void bad(const std::string& where, const std::string& problem) { throw BadField{where, problem}; }

std::string at(const std::string& where, const char* name) { return where + "." + name; }
std::string at(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

const json& field(const json& object, const std::string& where, const char* name) {
  if (!object.is_object()) bad(where, "must be an object, not " + json_excerpt(object, 40));
  if (!object.contains(name)) bad(where, std::string("has no \"") + name + "\"");
  return object[name];
}

namespace {

bool in_range(const json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return hi >= 0 && u <= uint64_t(hi) && (lo <= 0 || u >= uint64_t(lo));
  }
  return v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

}  // namespace

void whole(const json& v, const std::string& where, int64_t lo, int64_t hi) {
  if (!in_range(v, lo, hi))
    bad(where, "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
                   json_excerpt(v, 40));
}

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

void check_input_weights(const json& input) { check_weights(field(input, "input", "weights"), "input.weights"); }

void check_tokens(const json& input, const char* name, const std::string& where) {
  whole_list(field(input, where, name), at(where, name), 0, kInputVocab - 1, 1);
}

void check_token_lists(const json& input, const char* name) {
  const json& lists = field(input, "input", name);
  const std::string where = at("input", name);
  if (!lists.is_array() || lists.empty()) bad(where, "must be a non-empty list of token lists");
  for (size_t i = 0; i < lists.size(); ++i) whole_list(lists[i], at(where, i), 0, kInputVocab - 1, 1);
}

void check_model_blocks(const json& input) {
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxModelBlocks);
}

void check_requests(const json& input) {
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

int64_t check_probe_cache(const json& input) {
  const Tensor keys = tensor_at(field(input, "input", "keys"), "input.keys");
  const Tensor values = tensor_at(field(input, "input", "values"), "input.values");
  if (keys.shape.size() != 2 || keys.shape[1] != kInputModelDim || values.shape != keys.shape)
    bad("input", "\"keys\" and \"values\" must both be [n, 768]");
  return keys.shape[0];
}

void check_new_tokens(const json& input, int64_t positions) {
  const json& n = field(input, "input", "max_new_tokens");
  whole(n, "input.max_new_tokens", 1, kMaxNewTokens);
  if (positions + n.get<int64_t>() - 1 > kInputContext)
    bad("input", std::to_string(positions) + " prompt positions and " + std::to_string(n.get<int64_t>()) +
                     " new tokens do not fit in the model's " + std::to_string(kInputContext) + " positions");
}

void tensor_member(const json& object, const std::string& where, const char* name) {
  const json& v = field(object, where, name);
  const bool tensor = v.is_object() && v.contains("shape") && v.contains("dtype");
  const bool digest = v.is_object() && v.contains("digest") && v.contains("rows");
  if (!tensor && !digest) bad(at(where, name), "must be a tensor, not " + json_excerpt(v, 40));
}

namespace {

// The element checks of int_member and string_member, and of their lists.
void whole_number(const json& v, const std::string& where) {
  if (!v.is_number_integer()) bad(where, "must be a whole number, not " + json_excerpt(v, 40));
}

void string_value(const json& v, const std::string& where) {
  if (!v.is_string()) bad(where, "must be a string, not " + json_excerpt(v, 40));
}

}  // namespace

void int_member(const json& object, const std::string& where, const char* name) {
  object_member(object, where, name, whole_number);
}

void string_member(const json& object, const std::string& where, const char* name) {
  object_member(object, where, name, string_value);
}

void int_list_member(const json& object, const std::string& where, const char* name) {
  list_member(object, where, name, whole_number);
}

void string_list_member(const json& object, const std::string& where, const char* name) {
  list_member(object, where, name, string_value);
}

void shape_rows(const json& value, const std::string& where) {
  const auto row_ok = [](const json& row) {
    return row.is_array() && row.size() == 3 && row[0].is_number_integer() && row[1].is_number_integer() &&
           row[2].is_number_integer();
  };
  if (!value.is_array()) bad(where, "must be a list of shape rows, not " + json_excerpt(value, 40));
  for (size_t i = 0; i < value.size(); ++i)
    if (!row_ok(value[i]))
      bad(at(where, i), "must be a shape row [n_heads, length, head_dim], not " + json_excerpt(value[i], 40));
}

void shape_rows_member(const json& object, const std::string& where, const char* name) {
  shape_rows(field(object, where, name), at(where, name));
}

void list_member(const json& object, const std::string& where, const char* name, FormCheck each) {
  const json& v = field(object, where, name);
  if (!v.is_array()) bad(at(where, name), "must be a list, not " + json_excerpt(v, 40));
  for (size_t i = 0; i < v.size(); ++i) each(v[i], at(at(where, name), i));
}

void object_member(const json& object, const std::string& where, const char* name, FormCheck check) {
  check(field(object, where, name), at(where, name));
}

void cache_members(const json& object, const std::string& where) {
  shape_rows_member(object, where, "cache_shapes");
  tensor_member(object, where, "keys");
  tensor_member(object, where, "values");
}

void work_member(const json& object, const std::string& where) {
  object_member(object, where, "work", [](const json& work, const std::string& at_work) {
    int_list_member(work, at_work, "qkv_rows");
    int_list_member(work, at_work, "finish_block_rows");
    int_member(work, at_work, "forward_tokens");
  });
}

void served_requests_member(const json& output) {
  list_member(output, "output", "requests", [](const json& r, const std::string& where) {
    int_list_member(r, where, "tokens");
    tensor_member(r, where, "logits");
  });
}

void gpt2_run_output(const json& output) {
  cache_members(output, "output");
  tensor_member(output, "output", "logits");
  work_member(output, "output");
}

void probe_output(const json& output) { tensor_member(output, "output", "out"); }

}  // namespace spec

namespace {

// Every stage's specs by adapter name. Two stages stating the same adapter is a mistake of
// the course, found by the test that lists the served adapters (a name appears once).
const std::map<std::string, const AdapterSpec*>& specs_by_name() {
  static const std::map<std::string, const AdapterSpec*> table = [] {
    std::map<std::string, const AdapterSpec*> t;
    for (const StageSpecs& stage : stage_specs())
      for (const AdapterSpec& s : stage.specs()) t.emplace(s.name, &s);
    return t;
  }();
  return table;
}

std::string adapter_names() {
  std::string names;
  for (const auto& [name, spec] : specs_by_name()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

std::vector<std::string> served_adapters() {
  std::vector<std::string> names;
  for (const auto& [name, spec] : specs_by_name()) names.push_back(name);
  return names;
}

bool has_adapter_spec(const std::string& adapter) { return specs_by_name().count(adapter) > 0; }

void check_adapter_input(const std::string& adapter, const json& input) {
  auto it = specs_by_name().find(adapter);
  if (it == specs_by_name().end())
    throw AdapterInputError("adapter " + json_excerpt(json(adapter), 60) +
                            " is not one the runners serve (they serve " + adapter_names() + ")");
  try {
    it->second->check_input(input);
  } catch (const spec::BadField& b) {
    throw AdapterInputError(b.where + ": " + b.problem + " (adapter " + adapter + ")");
  }
}

void check_adapter_output(const std::string& adapter, const json& output) {
  auto it = specs_by_name().find(adapter);
  if (it == specs_by_name().end())
    throw AdapterOutputError("adapter " + json_excerpt(json(adapter), 60) + " is not one the runners serve");
  try {
    if (!it->second->check_output) spec::bad("output", "has no form stated in the adapter's spec");
    if (!output.is_object()) spec::bad("output", "must be an object, not " + json_excerpt(output, 40));
    it->second->check_output(output);
  } catch (const spec::BadField& b) {
    throw AdapterOutputError(b.where + ": " + b.problem + " (adapter " + adapter + ")");
  }
}

std::string setup_problem(const json& setup) {
  if (!setup.is_object()) return "must be an object";
  for (auto it = setup.begin(); it != setup.end(); ++it) {
    if (it.key() != "weights")
      return json_excerpt(json(it.key()), 40) + " is nothing a runner prepares (a setup holds only \"weights\")";
    try {
      spec::check_weights(it.value(), "weights");
    } catch (const spec::BadField& b) {
      return b.where + ": " + b.problem;
    }
  }
  return "";
}

}  // namespace course
