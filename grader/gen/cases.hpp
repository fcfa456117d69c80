// The graded cases, defined once, each in its stage's folder (gen/stage_cases.hpp): the
// generator runs each through the reference and writes fixtures/<stage>/<name>.json(.gz)
// with the reference's output as "expected".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "wire/tensor.hpp"

namespace course {

struct CaseSpec {
  std::string stage;
  std::string name;
  std::string checks;   // one sentence: what this case proves
  std::string adapter;
  json input;
  // Turns the adapter's output into what the fixture stores (default: as is).
  std::function<json(const json& output)> finalize;
  // The adapter must throw: the fixture expects {"error": <the exception's type>}, and a
  // runner passes the case only by throwing an exception of that type.
  bool expect_error = false;
};

// ---- Helpers the case files share (support.cpp) ---------------------------------------

// The self-describing row of append number `append_id` (the cache plans' rows):
//   k[h*64 + d] = append_id * 768 + h * 64 + d + 1,  v = -k
// (integers below 2^24, exact in float32), as {"k": tensor, "v": tensor}.
json describing_row(int append_id);
// The rows of appends first_id .. first_id + n - 1, stacked: {"k": [n, 768], "v": [n, 768]}
// (a paged plan's append of n positions); n = 1 is describing_row(first_id).
json describing_rows(int first_id, int n);

// The generator checks what a stage promises while it writes the fixtures: a broken
// promise stops it with this message.
void require(bool ok, const std::string& what);
bool same_bits(const std::vector<float>& a, const float* b, size_t n);
// Two caches as the bindings write them ({"cache_shapes", "keys", "values"}: cache_json,
// layers_json) hold the same shape rows and the same float bits; else require fails, naming
// `what` and the part that differs.
void require_same_cache(const json& a, const json& b, const std::string& what);

// Runs one adapter of the reference in-process.
json run_adapter(const std::string& name, const json& input);

// Logits, and a cache's K and V, as digest tensors (wire/digest.hpp): what a GPT-2 fixture
// keeps. digest_cache turns "keys", "values" and "logits" (when present) of an object.
json digest_logits(const json& tensor);
json digest_cache(json out);

std::vector<int> concat(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace course
