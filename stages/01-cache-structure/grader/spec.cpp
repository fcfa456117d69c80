// The input forms of stage cache-structure's adapters (wire/adapter_spec.hpp): a plan of
// cache operations (run_cache_plan), and one layer's rows to read back (read_kvcache).
#include "wire/spec_checks.hpp"

namespace course::stage_cache_structure {

namespace {

using namespace spec;

// {"plan": [{"op": "create"}, {"op": "append", "cache": i, "k": [768], "v": [768]},
//           {"op": "clone", "cache": i}, {"op": "crop", "cache": i, "n": n}, ...]}
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
      bad(at(where, "op"),
          "must be \"create\", \"append\", \"clone\" or \"crop\", not " + json_excerpt(op, 40));
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

// {"caches": [{"shape": [12, length, 64], "keys", "values"}, ...]}, or {"error": type}
// when the plan's crop must throw.
void cache_plan_output(const json& output) {
  if (output.contains("error")) return string_member(output, "output", "error");
  list_member(output, "output", "caches", [](const json& cache, const std::string& where) {
    int_list_member(cache, where, "shape");
    tensor_member(cache, where, "keys");
    tensor_member(cache, where, "values");
  });
}

void read_kvcache_output(const json& output) {
  int_list_member(output, "output", "shape");
  tensor_member(output, "output", "keys");
  tensor_member(output, "output", "values");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_cache_plan", check_cache_plan, cache_plan_output},
      {"read_kvcache", [](const json& input) { check_probe_cache(input); }, read_kvcache_output},
  };
  return specs;
}

}  // namespace course::stage_cache_structure
