// Known mistakes of stages one-token, prefill and prefix-reuse, and their detectors.
//
// What the detectors read (all from the fixture and the runner's output, never by running
// code):
//  * attention probes: the value rows are one-hot, so out[h][j] (one-token) or
//    out[r][h][j] (prefill) is the softmax weight given to position j: a weight of 0 where
//    the reference has one means a skipped position, a weight after the row's own position
//    means a missing mask, and log-ratios 8 times too large mean a missing 1/8 scale.
//  * GPT-2 runs: the 12 shape rows (how many positions each layer got), the cache's K and
//    V per (layer, head, pos) (layer 0's K and V depend only on the token and its position,
//    so a difference there is a wrong position), and the logits per step.
#include <algorithm>
#include <cmath>
#include <optional>

#include "judge/diagnose.hpp"
#include "wire/digest.hpp"

namespace course {

const std::vector<KnownMistake>& decode_mistakes() {
  static const std::vector<KnownMistake> v = {
      {"dec.masked_decode", "decode skips cached positions",
       "stages/03-one-token/lesson.md#mistake-masking-the-cache"},
      {"dec.missing_scale", "scores not scaled by 1/sqrt(head_dim)",
       "stages/03-one-token/lesson.md#mistake-no-scale"},
      {"dec.append_after_attention", "k and v appended after attention",
       "stages/03-one-token/lesson.md#mistake-appending-after-attention"},
      {"dec.double_append", "k and v appended twice",
       "stages/03-one-token/lesson.md#mistake-appending-twice"},
      {"dec.append_some_layers", "k and v appended in only some layers",
       "stages/03-one-token/lesson.md#mistake-appending-in-only-some-layers"},
      {"dec.position_not_continuing", "position does not continue from the cache length",
       "stages/03-one-token/lesson.md#mistake-the-wrong-position"},
      {"dec.close_not_exact", "close, but not bit-equal",
       "stages/03-one-token/lesson.md#mistake-close-but-not-equal"},
      {"dec.prefill_no_mask", "prefill without a causal mask",
       "stages/04-prefill/lesson.md#mistake-no-causal-mask"},
      {"dec.mask_off_by_one", "causal mask off by one: a row cannot see itself",
       "stages/04-prefill/lesson.md#mistake-a-mask-off-by-one"},
      {"dec.reuse_mutates_saved", "reuse changes the saved prefix (no clone)",
       "stages/05-prefix-reuse/lesson.md#mistake-reusing-without-a-clone"},
      {"dec.suffix_positions_restart", "suffix positions restart at 0",
       "stages/05-prefix-reuse/lesson.md#mistake-suffix-positions-starting-at-0"},
  };
  return v;
}

namespace {

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::optional<Tensor> tensor_in(const json& parent, const char* name) {
  if (!parent.is_object() || !parent.contains(name) || !is_tensor(parent[name]))
    return std::nullopt;
  try {
    return tensor_from_json(parent[name]);
  } catch (const TensorError&) {
    return std::nullopt;
  }
}

std::optional<Digest> digest_in(const json& parent, const char* name) {
  if (!parent.is_object() || !parent.contains(name) || !is_digest(parent[name]))
    return std::nullopt;
  try {
    return digest_from_json(parent[name]);
  } catch (const TensorError&) {
    return std::nullopt;
  }
}

// "Close but not bit-equal": every mismatch is a tensor or digest whose differences are
// below 1e-4 of the tensor's largest value, and at least one difference was measured.
bool all_close(const std::vector<Mismatch>& mismatches) {
  bool measured = false;
  for (const Mismatch& m : mismatches) {
    const json& d = m.data;
    if (!d.contains("max_abs_diff") || !d["max_abs_diff"].is_number() ||
        !d.contains("max_abs_expected"))
      return false;
    const double diff = d["max_abs_diff"].get<double>(),
                 scale = d["max_abs_expected"].get<double>();
    if (d.value("kind", "") == "digest" && d.value("sampled_mismatches", 0) == 0)
      continue;  // nothing measured
    if (!(scale > 0) || !(diff / scale < 1e-4)) return false;
    measured = true;
  }
  return measured;
}

std::optional<Diagnosis> close_not_exact(const CaseView& c) {
  if (c.mismatches.empty() || !all_close(c.mismatches)) return std::nullopt;
  double worst = 0;
  for (const Mismatch& m : c.mismatches)
    if (m.data.contains("max_abs_diff") && m.data["max_abs_diff"].is_number() &&
        m.data["max_abs_expected"].get<double>() > 0)
      worst = std::max(
          worst, m.data["max_abs_diff"].get<double>() / m.data["max_abs_expected"].get<double>());
  return diagnosis(
      "dec.close_not_exact",
      "every difference is tiny (at most " + num(worst) +
          " of the largest value): the right computation in another order of operations. Likely "
          "causes: "
          "std::exp instead of gpt2::exp, a sum in another order (or a dot product of your own), "
          "multiplying by 1/sum instead of dividing, or the scale folded into q");
}

// ---- the cache a GPT-2 run returned ---------------------------------------------------

// One returned ModelCache ({"cache_shapes", "keys", "values"}) against the expected one.
struct CacheCheck {
  std::vector<int> expected_len, actual_len;
  bool rows_equal = false;
  bool kv_comparable = false;  // K and V digests and tensors of the same shape
  int seq = 0;
  std::vector<bool> keys_ok, values_ok;  // per (layer, head, pos) row

  // Are K and V of every head of (layer, pos) as expected?
  bool pos_ok(int layer, int pos) const {
    for (int h = 0; h < 12; ++h) {
      size_t r = (size_t(layer) * 12 + size_t(h)) * size_t(seq) + size_t(pos);
      if (!keys_ok[r] || !values_ok[r]) return false;
    }
    return true;
  }
  std::vector<int> bad_positions(int layer) const {
    std::vector<int> out;
    for (int p = 0; p < seq; ++p)
      if (!pos_ok(layer, p)) out.push_back(p);
    return out;
  }
};

CacheCheck check_cache(const json& expected, const json& actual) {
  CacheCheck c;
  c.expected_len = shape_row_lengths(expected.value("cache_shapes", json()));
  c.actual_len = shape_row_lengths(actual.is_object() ? actual.value("cache_shapes", json()) : json());
  c.rows_equal = !c.expected_len.empty() && c.expected_len == c.actual_len;
  auto ek = digest_in(expected, "keys"), ev = digest_in(expected, "values");
  auto ak = tensor_in(actual, "keys"), av = tensor_in(actual, "values");
  if (c.rows_equal && ek && ev && ak && av && ek->shape.size() == 4 && ak->shape == ek->shape &&
      av->shape == ev->shape && ek->shape[0] == 12 && ek->shape[1] == 12) {
    c.kv_comparable = true;
    c.seq = int(ek->shape[2]);
    c.keys_ok = rows_matching(*ek, *ak);
    c.values_ok = rows_matching(*ev, *av);
  }
  return c;
}

// Per-layer lengths: appended twice, or in only some layers.
std::optional<Diagnosis> diagnose_lengths(const CacheCheck& c, const std::string& where) {
  if (c.rows_equal || c.actual_len.size() != c.expected_len.size() || c.expected_len.empty())
    return std::nullopt;
  const std::vector<int>& e = c.expected_len;
  const std::vector<int>& a = c.actual_len;
  bool all_double = true, some_right = false, some_wrong = false;
  for (size_t l = 0; l < e.size(); ++l) {
    all_double = all_double && e[l] > 0 && a[l] == 2 * e[l];
    some_right = some_right || a[l] == e[l];
    some_wrong = some_wrong || a[l] != e[l];
  }
  if (all_double)
    return diagnosis("dec.double_append", where + "every layer holds " + std::to_string(a[0]) +
                                              " positions after " + std::to_string(e[0]) +
                                              " tokens: each token's k and v went in twice");
  if (some_right && some_wrong)
    return diagnosis("dec.append_some_layers",
                     where + "layer lengths " + list_text(a) + ", expected " + list_text(e) +
                         ": every layer must get exactly one position per token");
  return std::nullopt;
}

// ---- attention probes -----------------------------------------------------------------

// The probe's weights: w[r][h][j] for query rows r, heads h, positions j < n.
struct ProbeWeights {
  int n_rows = 0, n = 0, first = 0;  // query row r is position first + r
  std::vector<float> expected, actual;
  float e(int r, int h, int j) const {
    return expected[(size_t(r) * 12 + size_t(h)) * 64 + size_t(j)];
  }
  float a(int r, int h, int j) const {
    return actual[(size_t(r) * 12 + size_t(h)) * 64 + size_t(j)];
  }
};

std::optional<ProbeWeights> probe_weights(const CaseView& c) {
  auto e = tensor_in(c.fixture.expected, "out");
  auto a = tensor_in(c.actual, "out");
  auto keys = tensor_in(c.fixture.input, "keys");
  if (!e || !a || !keys || e->shape != a->shape || keys->shape.size() != 2) return std::nullopt;
  ProbeWeights w;
  w.n = int(keys->shape[0]);
  w.n_rows = e->shape.size() == 3 ? int(e->shape[0]) : 1;
  w.first = w.n - w.n_rows;
  if (w.n > 64 || e->data.size() != size_t(w.n_rows) * 768) return std::nullopt;
  w.expected = e->data;
  w.actual = a->data;
  return w;
}

std::vector<Diagnosis> diagnose_attend_one(const ProbeWeights& w) {
  // Skipped positions: a weight of exactly 0 where the reference gives one.
  for (int h = 0; h < 12; ++h)
    for (int j = 0; j < w.n; ++j)
      if (w.e(0, h, j) > 0 && w.a(0, h, j) == 0.0f)
        return {diagnosis("dec.masked_decode",
                          "head " + std::to_string(h) + " gives cached position " +
                              std::to_string(j) + " weight 0 (expected " + num(w.e(0, h, j)) +
                              ") out of " + std::to_string(w.n) +
                              ": the query must see every cached position, with no mask")};
  // Missing scale: log-weight differences 8 (= 1 / 0.125) times the expected ones.
  if (w.n < 2) return {};
  int heads_scaled = 0, heads_checked = 0;
  for (int h = 0; h < 12; ++h) {
    int hi = 0, lo = 0;
    for (int j = 1; j < w.n; ++j) {
      if (w.e(0, h, j) > w.e(0, h, hi)) hi = j;
      if (w.e(0, h, j) < w.e(0, h, lo)) lo = j;
    }
    const double eh = w.e(0, h, hi), el = w.e(0, h, lo), ah = w.a(0, h, hi), al = w.a(0, h, lo);
    if (!(eh > el) || !(el > 0) || !(ah > 0) || !(al > 0)) continue;
    ++heads_checked;
    const double ratio = std::log(ah / al) / std::log(eh / el);
    if (ratio > 7.0 && ratio < 9.0) ++heads_scaled;
  }
  if (heads_checked > 0 && heads_scaled == heads_checked)
    return {
        diagnosis("dec.missing_scale",
                  "in every head the weights are as if each score were 8 times larger: the scores "
                  "were not multiplied by gpt2::attention_scale(64) = 0.125")};
  return {};
}

std::vector<Diagnosis> diagnose_attend_causal(const ProbeWeights& w) {
  for (int r = 0; r < w.n_rows; ++r) {
    const int p = w.first + r;
    for (int h = 0; h < 12; ++h)
      for (int j = p + 1; j < w.n; ++j)
        if (w.a(r, h, j) != 0.0f && !std::isnan(w.a(r, h, j)))
          return {diagnosis("dec.prefill_no_mask",
                            "query row " + std::to_string(r) + " (position " + std::to_string(p) +
                                "), head " + std::to_string(h) + " gives weight " +
                                num(w.a(r, h, j)) + " to position " + std::to_string(j) +
                                ", which comes after it: the future leaks into the past")};
  }
  for (int r = 0; r < w.n_rows; ++r) {
    const int p = w.first + r;
    for (int h = 0; h < 12; ++h)
      if (w.e(r, h, p) > 0 && (w.a(r, h, p) == 0.0f || std::isnan(w.a(r, h, p))))
        return {diagnosis(
            "dec.mask_off_by_one",
            "query row " + std::to_string(r) + " (position " + std::to_string(p) + "), head " +
                std::to_string(h) + " gives its own position weight " + num(w.a(r, h, p)) +
                " (expected " + num(w.e(r, h, p)) + ")" +
                (p == 0 ? ": with itself masked, row 0 sees nothing and its softmax is 0/0" : "") +
                ": row i must see positions 0 .. i, itself included")};
  }
  return {};
}

// ---- GPT-2 runs -----------------------------------------------------------------------

std::vector<bool> logits_rows_ok(const json& expected, const json& actual, const char* name) {
  auto e = digest_in(expected, name);
  auto a = tensor_in(actual, name);
  if (!e || !a) return {};
  return rows_matching(*e, *a);
}

}  // namespace

std::vector<Diagnosis> diagnose_one_token(const CaseView& c) {
  if (auto d = close_not_exact(c)) return {*d};
  if (c.fixture.adapter == "attend_one") {
    auto w = probe_weights(c);
    return w ? diagnose_attend_one(*w) : std::vector<Diagnosis>{};
  }
  if (c.fixture.adapter != "run_decode") return {};
  CacheCheck cache = check_cache(c.fixture.expected, c.actual);
  if (auto d = diagnose_lengths(cache, "")) return {*d};
  if (!cache.kv_comparable) return {};
  std::vector<int> bad0 = cache.bad_positions(0);
  if (!bad0.empty())
    return {diagnosis("dec.position_not_continuing",
                      "layer 0's keys and values differ at position " +
                          std::to_string(bad0.front()) +
                          "; they depend only on the token and its position, so the token went in "
                          "at the wrong position "
                          "(it must be the cache's length before the step: 0, 1, 2, ...)")};
  std::vector<bool> steps = logits_rows_ok(c.fixture.expected, c.actual, "logits");
  if (!steps.empty() && !steps[0])
    return {diagnosis("dec.append_after_attention",
                      "the very first step's logits differ while layer 0's keys and values are "
                      "right: at step 0 the token "
                      "had nothing to attend to, so its k and v were appended after attention "
                      "instead of before")};
  return {};
}

std::vector<Diagnosis> diagnose_prefill(const CaseView& c) {
  if (auto d = close_not_exact(c)) return {*d};
  if (c.fixture.adapter == "attend_causal") {
    auto w = probe_weights(c);
    return w ? diagnose_attend_causal(*w) : std::vector<Diagnosis>{};
  }
  if (c.fixture.adapter != "run_prefill") return {};
  CacheCheck cache = check_cache(c.fixture.expected, c.actual);
  if (auto d = diagnose_lengths(cache, "")) return {*d};
  if (!cache.kv_comparable || cache.seq < 2) return {};
  std::vector<int> bad0 = cache.bad_positions(0), bad1 = cache.bad_positions(1);
  if (!bad0.empty())
    return {diagnosis("dec.position_not_continuing",
                      "layer 0's keys and values differ at position " +
                          std::to_string(bad0.front()) +
                          "; they depend only on the token and its position: row i must be "
                          "position i (after what the cache "
                          "held)")};
  // Without a mask every row sees the whole prompt; only the last row, which may see
  // everything anyway, stays right. That shows in layer 1, the first fed by attention.
  const int last = cache.seq - 1;
  if (int(bad1.size()) == last && (bad1.empty() || bad1.back() == last - 1))
    return {
        diagnosis("dec.prefill_no_mask",
                  "in layer 1 every position except the last differs: each row attended to "
                  "positions after its own; only the last row, which may see them all, is right")};
  return {};
}

std::vector<Diagnosis> diagnose_prefix_reuse(const CaseView& c) {
  if (auto d = close_not_exact(c)) return {*d};
  const json& e = c.fixture.expected;
  const json& a = c.actual;
  // The saved prefix must not change: its rows after every reuse.
  const json& e_after = e.value("saved_rows_after_each", json::array());
  const json& a_after = a.is_object() && a.contains("saved_rows_after_each")
                            ? a["saved_rows_after_each"]
                            : json::array();
  for (size_t i = 0; i < e_after.size() && i < a_after.size(); ++i) {
    std::vector<int> el = shape_row_lengths(e_after[i]), al = shape_row_lengths(a_after[i]);
    if (!el.empty() && el != al)
      return {diagnosis("dec.reuse_mutates_saved",
                        "after suffix " + std::to_string(i) + " the saved prefix's layers hold " +
                            list_text(al) + " positions instead of " + list_text(el) +
                            ": the suffix was appended to the saved cache itself; continue from "
                            "saved.cache.clone(), not from a copy that shares its layers")};
  }
  if (e.contains("saved") && a.is_object() && a.contains("saved")) {
    CacheCheck saved = check_cache(e["saved"], a["saved"]);
    if (saved.kv_comparable) {
      bool changed = false;
      for (int l = 0; l < 12 && !changed; ++l) changed = !saved.bad_positions(l).empty();
      if (changed)
        return {diagnosis("dec.reuse_mutates_saved",
                          "the saved prefix's keys or values changed while it was reused: continue "
                          "from a clone")};
    }
  }
  // Suffix positions: layer 0 of the continued cache, positions after the prefix.
  const int n_prefix = [&] {
    std::vector<int> l =
        shape_row_lengths(e.contains("saved") ? e["saved"].value("cache_shapes", json()) : json());
    return l.empty() ? -1 : l[0];
  }();
  const json& e_cont = e.value("continued", json::array());
  const json& a_cont = a.is_object() && a.contains("continued") ? a["continued"] : json::array();
  for (size_t i = 0; i < e_cont.size() && i < a_cont.size(); ++i) {
    CacheCheck cont = check_cache(e_cont[i], a_cont[i]);
    if (!cont.kv_comparable || n_prefix < 0) continue;
    std::vector<int> bad0 = cont.bad_positions(0);
    if (!bad0.empty() && bad0.front() >= n_prefix)
      return {diagnosis(
          "dec.suffix_positions_restart",
          "continuation " + std::to_string(i) + ": layer 0's keys and values are right for the " +
              std::to_string(n_prefix) + " prefix positions and wrong from position " +
              std::to_string(bad0.front()) +
              ": the suffix's positions must continue after the prefix (" +
              std::to_string(n_prefix) + ", " + std::to_string(n_prefix + 1) +
              ", ...), not start at 0")};
  }
  return {};
}

}  // namespace course
