// Known mistakes of stages cache-structure and multi-layer-cache, and their detectors.
#include <algorithm>
#include <cstdlib>

#include "judge/diagnose.hpp"

namespace course {

namespace {


// ---- cache-structure -----------------------------------------------------------------

// What reading a [seq, n_heads, head_dim] buffer as if it were [n_heads, seq, head_dim]
// returns, given the right [n_heads, seq, head_dim] contents.
std::vector<float> read_transposed(const Tensor& right) {
  const int64_t heads = right.shape[0], seq = right.shape[1], dim = right.shape[2];
  std::vector<float> stored(right.data.size());  // [seq, heads, dim]
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t p = 0; p < seq; ++p)
      for (int64_t d = 0; d < dim; ++d) stored[size_t((p * heads + h) * dim + d)] = right.data[size_t((h * seq + p) * dim + d)];
  return stored;  // read back in [heads, seq, dim] order: element (h, p, d) at (h*seq+p)*dim+d
}

bool tensor_at(const json& cache, const char* name, Tensor& out) {
  if (!cache.is_object() || !cache.contains(name) || !is_tensor(cache[name])) return false;
  try {
    out = tensor_from_json(cache[name]);
  } catch (const TensorError&) {
    return false;
  }
  return true;
}

int shape_len(const json& cache) {
  if (!cache.is_object() || !cache.contains("shape") || !cache["shape"].is_array() || cache["shape"].size() != 3 ||
      !cache["shape"][1].is_number_integer())
    return -1;
  return cache["shape"][1].get<int>();
}

// After `expected` appends a cache holds `actual` positions: is that what an append that
// adds zero or two positions (or a length that is one off) would give?
bool growth_looks_off(int expected, int actual) {
  if (expected <= 0 || actual < 0 || actual == expected) return false;
  return actual == 0 || actual == 2 * expected || std::abs(expected - actual) == 1;
}

// ---- multi-layer-cache ---------------------------------------------------------------

std::vector<int> count_per_layer(const std::vector<int>& appends) {
  std::vector<int> n(12, 0);
  for (int l : appends)
    if (l >= 0 && l < 12) ++n[size_t(l)];
  return n;
}

// Diagnoses that only need the appends and the lengths a ModelCache reports.
void diagnose_lengths(const std::vector<int>& appends, const std::vector<int>& expected, const std::vector<int>& actual,
                      const std::string& which, std::vector<Diagnosis>& out) {
  if (actual.size() != expected.size() || actual == expected) return;
  const int total = int(appends.size());
  if (total >= 1 && std::all_of(actual.begin(), actual.end(), [&](int n) { return n == total; })) {
    out.push_back(diagnosis("kvc.shared_layers",
                            which + "every layer reports length " + std::to_string(total) +
                                ", the number of appends to all layers together: the 12 layers are one shared KVCache"));
    return;
  }
  // A length that counts every append made so far, to any layer.
  bool counts_all = total > 1;
  bool any_wrong = false;
  for (size_t l = 0; l < expected.size() && counts_all; ++l) {
    if (expected[l] == 0) {
      counts_all = actual[l] == 0;
      continue;
    }
    int last = -1;
    for (int i = 0; i < total; ++i)
      if (appends[size_t(i)] == int(l)) last = i;
    bool running = actual[l] == last + 1, whole = actual[l] == total;
    counts_all = running || whole;
    any_wrong = any_wrong || actual[l] != expected[l];
  }
  if (counts_all && any_wrong) {
    out.push_back(diagnosis("kvc.length_counts_all_layers",
                            which + "lengths " + list_text(actual) + " for appends " + list_text(appends) +
                                ": a layer's length counts appends made to other layers too"));
    return;
  }
  bool off = true;
  for (size_t l = 0; l < expected.size(); ++l) off = off && (expected[l] == actual[l] || growth_looks_off(expected[l], actual[l]));
  if (off)
    out.push_back(diagnosis("kvc.off_by_one_growth", which + "lengths " + list_text(actual) + " where " +
                                                         list_text(expected) + " were expected: an append does not add exactly one position"));
}

}  // namespace

const std::vector<KnownMistake>& cache_mistakes() {
  static const std::vector<KnownMistake> v = {
      {"kvc.transposed_layout", "transposed layout", "stages/01-cache-structure/lesson.md#mistake-transposed-layout"},
      {"kvc.off_by_one_growth", "off-by-one growth", "stages/01-cache-structure/lesson.md#mistake-off-by-one-growth"},
      {"kvc.kv_swapped", "keys and values swapped", "stages/01-cache-structure/lesson.md#mistake-keys-and-values-swapped"},
      {"kvc.shared_layers", "layers share one cache", "stages/02-multi-layer-cache/lesson.md#mistake-layers-sharing-one-cache"},
      {"kvc.length_counts_all_layers", "length counts every layer's appends",
       "stages/02-multi-layer-cache/lesson.md#mistake-a-length-that-counts-every-layer"},
      {"kvc.shallow_clone", "shallow clone", "stages/02-multi-layer-cache/lesson.md#mistake-shallow-clone"},
      {"kvc.clone_empty", "clone starts empty", "stages/02-multi-layer-cache/lesson.md#mistake-a-clone-that-starts-empty"},
  };
  return v;
}

std::vector<Diagnosis> diagnose_cache_structure(const CaseView& c) {
  std::vector<Diagnosis> out;
  const json& expected = c.fixture.expected.value("caches", json::array());
  const json& actual = c.actual.contains("caches") ? c.actual["caches"] : json::array();
  if (!actual.is_array()) return out;
  bool transposed = false, swapped = false, growth = false;
  std::string transposed_at, swapped_at, growth_at;
  for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
    const std::string name = "cache " + std::to_string(i);
    int e_len = shape_len(expected[i]), a_len = shape_len(actual[i]);
    if (e_len != a_len) {
      if (growth_looks_off(e_len, a_len) && !growth) {
        growth = true;
        growth_at = name + " holds " + std::to_string(a_len) + " positions after " + std::to_string(e_len) + " appends";
      }
      continue;
    }
    Tensor ek, ev, ak, av;
    if (!tensor_at(expected[i], "keys", ek) || !tensor_at(expected[i], "values", ev) || !tensor_at(actual[i], "keys", ak) ||
        !tensor_at(actual[i], "values", av) || ak.shape != ek.shape || av.shape != ev.shape)
      continue;
    if (ak.data == ek.data && av.data == ev.data) continue;
    if (e_len >= 2 && !transposed && ak.data == read_transposed(ek) && av.data == read_transposed(ev)) {
      transposed = true;
      transposed_at = name + ": every value is present but at the wrong (head, pos): reading position-major rows as head-major planes gives exactly this";
    }
    if (!swapped && ak.data == ev.data && av.data == ek.data) {
      swapped = true;
      swapped_at = name + ": its keys are the expected values and its values the expected keys";
    }
  }
  if (transposed) out.push_back(diagnosis("kvc.transposed_layout", transposed_at));
  if (swapped) out.push_back(diagnosis("kvc.kv_swapped", swapped_at));
  if (growth) out.push_back(diagnosis("kvc.off_by_one_growth", growth_at));
  return out;
}

std::vector<Diagnosis> diagnose_multi_layer_cache(const CaseView& c) {
  std::vector<Diagnosis> out;
  const json& in = c.fixture.input;
  const json& e = c.fixture.expected;
  auto ints = [](const json& j) {
    std::vector<int> v;
    if (j.is_array())
      for (const auto& x : j)
        if (x.is_number_integer()) v.push_back(x.get<int>());
    return v;
  };
  if (in.contains("appends")) {
    diagnose_lengths(ints(in["appends"]), shape_row_lengths(e.value("rows", json())), shape_row_lengths(c.actual.value("rows", json())), "",
                     out);
    return out;
  }
  // A clone case: `before` appends, clone, then appends to each side.
  std::vector<int> before = ints(in.value("before", json())), after_o = ints(in.value("after_original", json())),
                   after_c = ints(in.value("after_clone", json()));
  std::vector<int> eo = shape_row_lengths(e.value("original", json())), ec = shape_row_lengths(e.value("clone", json()));
  std::vector<int> ao = shape_row_lengths(c.actual.value("original", json())), ac = shape_row_lengths(c.actual.value("clone", json()));
  if (ao.size() != 12 || ac.size() != 12 || eo.size() != 12 || ec.size() != 12) return out;
  std::vector<int> nb = count_per_layer(before), no = count_per_layer(after_o), nc = count_per_layer(after_c);
  bool shallow = true, empty_clone = true;
  for (size_t l = 0; l < 12; ++l) {
    int all = nb[l] + no[l] + nc[l];
    shallow = shallow && ao[l] == all && ac[l] == all;
    empty_clone = empty_clone && ac[l] == nc[l] && ao[l] == eo[l];
  }
  if (shallow && (ao != eo || ac != ec)) {
    out.push_back(diagnosis("kvc.shallow_clone",
                            "after cloning, appends to the original show in the copy and appends to the copy show in the "
                            "original (both now report " + list_text(ao) + "): they share their layers"));
    return out;
  }
  if (empty_clone && ac != ec) {
    out.push_back(diagnosis("kvc.clone_empty", "the copy holds only the appends made to it after cloning (" + list_text(ac) +
                                                   "): clone() returned a fresh cache instead of a copy"));
    return out;
  }
  std::vector<int> all_o = before, all_c = before;
  all_o.insert(all_o.end(), after_o.begin(), after_o.end());
  all_c.insert(all_c.end(), after_c.begin(), after_c.end());
  diagnose_lengths(all_o, eo, ao, "original: ", out);
  if (out.empty()) diagnose_lengths(all_c, ec, ac, "copy: ", out);
  return out;
}

}  // namespace course
