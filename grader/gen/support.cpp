// Helpers shared by the case files (cases.hpp).
#include <cstring>
#include <stdexcept>

#include "gen/cases.hpp"
#include "runner/bindings.hpp"
#include "wire/digest.hpp"
#include "wire/shape.hpp"

namespace course {

json describing_row(int append_id) {
  constexpr int kDModel = shape::kDModel;
  Tensor k, v;
  k.shape = v.shape = {kDModel};
  k.axes = v.axes = {"feature"};
  for (int i = 0; i < kDModel; ++i) {
    const float x = float(append_id * kDModel + i + 1);
    k.data.push_back(x);
    v.data.push_back(-x);
  }
  return {{"k", tensor_to_json(k, TensorEncoding::numbers)}, {"v", tensor_to_json(v, TensorEncoding::numbers)}};
}

json describing_rows(int first_id, int n) {
  if (n == 1) return describing_row(first_id);
  constexpr int kDModel = shape::kDModel;
  Tensor k, v;
  k.shape = v.shape = {n, kDModel};
  k.axes = v.axes = {"row", "feature"};
  for (int r = 0; r < n; ++r) {
    const json one = describing_row(first_id + r);
    for (const char* name : {"k", "v"}) {
      const Tensor t = tensor_from_json(one[name]);
      Tensor& out = name[0] == 'k' ? k : v;
      out.data.insert(out.data.end(), t.data.begin(), t.data.end());
    }
  }
  return {{"k", tensor_to_json(k, TensorEncoding::numbers)},
          {"v", tensor_to_json(v, TensorEncoding::numbers)}};
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("the reference breaks a promise of the course: " + what);
}

bool same_bits(const std::vector<float>& a, const float* b, size_t n) {
  return a.size() == n && std::memcmp(a.data(), b, n * sizeof(float)) == 0;
}

void require_same_cache(const json& a, const json& b, const std::string& what) {
  require(a["cache_shapes"] == b["cache_shapes"], what + ": shape rows");
  for (const char* name : {"keys", "values"}) {
    const Tensor x = tensor_from_json(a[name]), y = tensor_from_json(b[name]);
    require(x.shape == y.shape && same_bits(x.data, y.data.data(), y.data.size()), what + ": " + name);
  }
}

json run_adapter(const std::string& name, const json& input) { return adapter_table().at(name)(input); }

json digest_logits(const json& tensor) {
  const Tensor t = tensor_from_json(tensor);
  return make_digest(t, spread_indices(t.shape.back(), 32), true);
}

json digest_cache(json out) {
  for (const char* name : {"keys", "values"})
    if (out.contains(name)) out[name] = make_digest(tensor_from_json(out[name]), {0, 63}, false);
  if (out.contains("logits")) out["logits"] = digest_logits(out["logits"]);
  return out;
}

std::vector<int> concat(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace course
