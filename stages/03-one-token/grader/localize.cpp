// Localization of the attention probes and of the GPT-2 runs (decode, prefill, a reused
// prefix; stage generate's loop reads its runs with localize_run too).
//
//  * Attention probes: the first wrong (row, head, dim) of the output. With one-hot value
//    rows the output of a head is its softmax weights, so the report shows the weights.
//  * GPT-2 runs: the fixture holds a digest of every cached (layer, head, pos) row and of
//    every logits row. A run is computed chunk by chunk (a decode step is a chunk of one
//    position), and in a chunk layer by layer: layer l's keys and values at position p
//    come from layer l-1's attention output at p (or, for layer 0, from the token and
//    position alone). So the first wrong row in that order says what lies between the last
//    right number and the first wrong one.
#include <algorithm>
#include <cmath>

#include "judge/localize.hpp"
#include "wire/shape.hpp"

namespace course {

namespace {

constexpr int kLayers = shape::kLayers, kHeads = shape::kHeads, kDim = shape::kHeadDim,
              kDModel = shape::kDModel;

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

// ---- attention probes ------------------------------------------------------------------

bool one_hot(const Tensor& values) {
  const int64_t n = values.shape[0];
  for (int64_t j = 0; j < n; ++j)
    for (int h = 0; h < kHeads; ++h)
      for (int d = 0; d < kDim; ++d)
        if (values.data[size_t(j * kDModel + h * kDim + d)] != (d == j ? 1.0f : 0.0f)) return false;
  return true;
}

std::string weights_table(const Tensor& e, const Tensor& a, size_t base, int n, int first_bad) {
  const int from = n <= 8 ? 0 : std::max(0, std::min(first_bad - 2, n - 8));
  const int to = std::min(64, n <= 8 ? n : from + 8);
  std::string pos = "position:", exp = "expected:", got = "got:     ";
  auto number = [](float f) {
    char cell[32];
    if (std::isnan(f))
      std::snprintf(cell, sizeof cell, " %10s", "NaN");
    else
      std::snprintf(cell, sizeof cell, " %10.6g", double(f));
    return std::string(cell);
  };
  for (int j = from; j < to; ++j) {
    char cell[32];
    std::snprintf(cell, sizeof cell, " %10d", j);
    pos += cell;
    exp += number(e.data[base + size_t(j)]);
    got += number(a.data[base + size_t(j)]);
  }
  return pos + "\n" + exp + "\n" + got;
}

}  // namespace

Lines localize_probe(const Fixture& fx, const json& actual) {
  Lines out;
  std::optional<Tensor> e = tensor_at(fx.expected, "out"), a = tensor_at(actual, "out"),
                        keys = tensor_at(fx.input, "keys"), values = tensor_at(fx.input, "values");
  if (!e || !keys || !values || keys->shape.size() != 2) return out;
  if (!a) return {"out is not a tensor."};
  if (a->shape != e->shape)
    return {"out has shape " + shape_text(a->shape) + " where " + shape_text(e->shape) +
            " was expected. Nothing more is read from it."};
  const int n = int(keys->shape[0]);
  const int n_rows = e->shape.size() == 3 ? int(e->shape[0]) : 1;
  const bool causal = fx.adapter == "attend_causal";
  int bad = 0, first = -1;
  int64_t max_ulp = 0;
  for (size_t i = 0; i < e->data.size(); ++i) {
    if (e->data[i] == a->data[i]) continue;
    if (bad++ == 0) first = int(i);
    const int64_t u = ulp_distance(e->data[i], a->data[i]);
    max_ulp = u < 0 || max_ulp < 0 ? -1 : std::max(max_ulp, u);
  }
  if (bad == 0) return out;
  const int r = first / kDModel, h = (first % kDModel) / kDim, d = first % kDim;
  const int p = n - n_rows + r;
  const std::string where = (causal ? "Row " + std::to_string(r) + " (position " + std::to_string(p) + ", which sees positions 0 .. " + std::to_string(p) + "), head " : "Head ") +
                            std::to_string(h);
  const std::string right = r == 0 && h == 0 ? "" : " Everything before it in " + std::string(causal ? "[row, head]" : "head") + " order is right.";
  if (one_hot(*values)) {
    out.push_back("The value rows are one-hot (position j's is 1 in dim j), so out" + std::string(causal ? "[r]" : "") +
                  "[h][j] is the weight given to position j. " + where + " is the first with a wrong weight, at position " +
                  std::to_string(d) + (d >= n ? " (there are only " + std::to_string(n) + " positions: it must stay 0)" : "") +
                  "." + right);
    out.push_back(weights_table(*e, *a, size_t(r) * kDModel + size_t(h) * kDim, std::max(n, d + 1), d));
  } else {
    out.push_back(where + ", dim " + std::to_string(d) + " is the first wrong value: expected " +
                  format_float(e->data[size_t(first)], a->data[size_t(first)]) + ", got " +
                  format_float(a->data[size_t(first)], e->data[size_t(first)]) + "." + right);
  }
  std::string extent = std::to_string(bad) + " of " + std::to_string(e->data.size()) + " values differ";
  if (max_ulp >= 0 && max_ulp <= 1024)
    extent += "; every differing value is within " + count_text(max_ulp, "ulp") + " of the expected one: close, not equal";
  out.push_back(extent + ".");
  return out;
}

// ---- GPT-2 runs ------------------------------------------------------------------------

namespace {

struct KvRows {
  int seq = 0;
  std::vector<bool> keys_ok, values_ok;  // [layer][head][pos]
  Tensor keys, values;
  size_t row(int l, int h, int p) const { return (size_t(l) * kHeads + size_t(h)) * size_t(seq) + size_t(p); }
  std::vector<int> bad_heads(int l, int p, bool key) const {
    std::vector<int> out;
    for (int h = 0; h < kHeads; ++h)
      if (!(key ? keys_ok : values_ok)[row(l, h, p)]) out.push_back(h);
    return out;
  }
  bool nan_at(int l, int p) const {
    for (int h = 0; h < kHeads; ++h)
      for (int d = 0; d < kDim; ++d)
        if (std::isnan(keys.data[row(l, h, p) * kDim + size_t(d)]) || std::isnan(values.data[row(l, h, p) * kDim + size_t(d)]))
          return true;
    return false;
  }
};

std::string heads_text(const std::vector<int>& heads) {
  return heads.size() == size_t(kHeads) ? "every head" : (heads.size() == 1 ? "head " : "heads ") + index_list(heads);
}

std::string positions_text(int from, int to) {
  return to - from == 1 ? "position " + std::to_string(from) : "positions " + range_text(from, to - 1);
}

// What was computed, and right, before (chunk c, layer l, position p).
std::string right_before(const RunPlan& plan, size_t c, int l, int p) {
  const Chunk& ch = plan.chunks[c];
  std::vector<std::string> parts;
  if (ch.from > 0) {
    bool logits = false;
    for (size_t i = 0; i < c; ++i) logits = logits || plan.chunks[i].logits_row >= 0;
    parts.push_back("every layer at " + positions_text(0, ch.from) + (logits ? ", and the logits computed there" : ""));
  }
  if (l > 0) parts.push_back((l == 1 ? "layer 0" : "layers " + range_text(0, l - 1)) + " at " + positions_text(ch.from, ch.to));
  if (l >= 0 && p > ch.from) parts.push_back("layer " + std::to_string(l) + " at " + positions_text(ch.from, p));
  if (l < 0) parts.push_back("every layer at " + positions_text(ch.from, ch.to));
  if (parts.empty()) return "Nothing is computed before it.";
  std::string s = "Right before it: ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s + ".";
}

std::string kv_story(const KvRows& kv, const RunPlan& plan, size_t c, int l, int p, const std::string& who) {
  const Chunk& ch = plan.chunks[c];
  const std::string& attention = ch.attention.empty() ? plan.attention : ch.attention;
  std::vector<int> kh = kv.bad_heads(l, p, true), vh = kv.bad_heads(l, p, false);
  std::string what = "layer " + std::to_string(l) + "'s ";
  if (!kh.empty() && !vh.empty())
    what += "keys (" + heads_text(kh) + ") and values (" + heads_text(vh) + ")";
  else if (!kh.empty())
    what += "keys (" + heads_text(kh) + "; its values there are right)";
  else
    what += "values (" + heads_text(vh) + "; its keys there are right)";
  const std::string before = right_before(plan, c, l, p);
  std::string s = who + "the first wrong number is in " + what + " at position " + std::to_string(p) +
                  (kv.nan_at(l, p) ? " (some are NaN)" : "") + ". " + before +
                  (before.rfind("Nothing", 0) == 0 ? " It comes from: " : " Between them: ");
  if (l == 0)
    s += "model.embed of the token at position " + std::to_string(p) + " (layer 0's keys and values depend on nothing but that token and its position), ";
  else
    s += "layer " + std::to_string(l - 1) + "'s attention at position " + std::to_string(p) + " (" + attention +
         ") and its finish_block, ";
  return s + "layer " + std::to_string(l) + "'s model.qkv, the append, and the read back through key() and value()." +
         (ch.what.empty() ? "" : " Position " + std::to_string(p) + " is " + ch.what + ".");
}

std::string extent(const KvRows& kv) {
  int k = 0, v = 0;
  for (bool ok : kv.keys_ok) k += !ok;
  for (bool ok : kv.values_ok) v += !ok;
  return std::to_string(k) + " of " + std::to_string(kv.keys_ok.size()) + " key rows and " + std::to_string(v) +
         " of " + std::to_string(kv.values_ok.size()) + " value rows differ";
}

// One run's output ({"cache_shapes", "keys", "values"} and the logits at `logits_key` of
// `e`/`a`, if any) against the expected one, in `plan`'s order. True when all is right.
// When the learner's first wrong key (or value) row at (l, p) is, bit for bit, an
// expected row elsewhere: a sentence saying which; "" otherwise. Its own layer and head
// are searched first, then every row of keys and values.
std::string same_row_elsewhere(const KvRows& kv, const Digest& ek, const Digest& ev, int l, int p) {
  std::vector<int> kh = kv.bad_heads(l, p, true);
  const bool key = !kh.empty();
  const int h = key ? kh.front() : kv.bad_heads(l, p, false).front();
  const Tensor& t = key ? kv.keys : kv.values;
  const std::string mine = row_digest(t.data.data() + kv.row(l, h, p) * kDim, kDim);
  const std::string what = "layer " + std::to_string(l) + "'s " + (key ? "key" : "value") + " at position " +
                           std::to_string(p) + ", head " + std::to_string(h);
  for (int q = 0; q < kv.seq; ++q)
    for (int pass = 0; pass < 2; ++pass) {
      const Digest& d = (pass == 0) == key ? ek : ev;
      if (q != p && d.rows[kv.row(l, h, q)] == mine)
        return what + " equals, bit for bit, the expected " + ((pass == 0) == key ? (key ? "key" : "value") : (key ? "value" : "key")) +
               " at position " + std::to_string(q) + " (same layer and head).";
    }
  for (int pass = 0; pass < 2; ++pass) {
    const Digest& d = pass == 0 ? ek : ev;
    for (size_t k = 0; k < d.rows.size(); ++k) {
      if ((pass == 0) == key && k == kv.row(l, h, p)) continue;
      if (d.rows[k] != mine) continue;
      const int q = int(k % size_t(kv.seq)), hh = int(k / size_t(kv.seq) % kHeads), ll = int(k / size_t(kv.seq) / kHeads);
      return what + " equals, bit for bit, the expected " + (pass == 0 ? "key" : "value") + " of layer " + std::to_string(ll) +
             ", head " + std::to_string(hh) + ", position " + std::to_string(q) + ".";
    }
  }
  return "";
}

}  // namespace

bool localize_run(const json& e, const json& a, const char* logits_key, const RunPlan& plan, const std::string& who,
                  Lines& out) {
  if (!a.is_object()) {
    out.push_back(who + "not an object.");
    return false;
  }
  if (!rows_as_expected(e.value("cache_shapes", json()), a.value("cache_shapes", json()), who + "shape rows", out))
    return false;
  KvRows kv;
  std::optional<Digest> ek = digest_at(e, "keys"), ev = digest_at(e, "values");
  std::optional<Tensor> ak = tensor_at(a, "keys"), av = tensor_at(a, "values");
  if (!ek || !ev) return true;
  if (!ak || !av || ak->shape != ek->shape || av->shape != ev->shape) {
    out.push_back(who + "the keys or values are " + (ak ? shape_text(ak->shape) : std::string("missing")) + ", expected " +
                  shape_text(ek->shape) + ". Nothing more is read from them.");
    return false;
  }
  kv.seq = int(ek->shape[2]);
  kv.keys_ok = rows_matching(*ek, *ak);
  kv.values_ok = rows_matching(*ev, *av);
  kv.keys = std::move(*ak);
  kv.values = std::move(*av);
  std::vector<bool> logits_ok;
  std::optional<Digest> el = logits_key ? digest_at(e, logits_key) : std::nullopt;
  std::optional<Tensor> al = logits_key ? tensor_at(a, logits_key) : std::nullopt;
  if (el && (!al || al->shape != el->shape)) {
    out.push_back(who + "the logits are " + (al ? shape_text(al->shape) : std::string("missing")) + ", expected " +
                  shape_text(el->shape) + "; they are not read further.");
    el.reset();
  }
  if (el) logits_ok = rows_matching(*el, *al);
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    const Chunk& ch = plan.chunks[c];
    for (int l = 0; l < kLayers; ++l)
      for (int p = ch.from; p < ch.to && p < kv.seq; ++p) {
        if (kv.bad_heads(l, p, true).empty() && kv.bad_heads(l, p, false).empty()) continue;
        out.push_back(kv_story(kv, plan, c, l, p, who));
        const std::string same = same_row_elsewhere(kv, *ek, *ev, l, p);
        if (!same.empty()) out.push_back(who + same);
        out.push_back("In all, " + extent(kv) + ".");
        return false;
      }
    if (ch.logits_row >= 0 && size_t(ch.logits_row) < logits_ok.size() && !logits_ok[size_t(ch.logits_row)]) {
      const int64_t argmax = el->argmax.empty() ? -1 : el->argmax[size_t(ch.logits_row)];
      out.push_back(who + "every cached key and value is right; the first wrong number is in the logits of " + ch.logits_name +
                    " (position " + std::to_string(ch.to - 1) + "). " + right_before(plan, c, -1, ch.to) +
                    " Between them: layer 11's attention at position " + std::to_string(ch.to - 1) + " (" +
                    (ch.attention.empty() ? plan.attention : ch.attention) +
                    ") and its finish_block, and model.logits of that row" +
                    (argmax >= 0 ? " (the largest logit should be at index " + std::to_string(argmax) + ")" : "") + ".");
      // A wrong row that is, bit for bit, another expected row.
      const size_t r = size_t(ch.logits_row), n = size_t(el->row_size);
      const std::string mine = row_digest(al->data.data() + r * n, n);
      for (size_t k = 0; k < el->rows.size(); ++k) {
        if (k == r || el->rows[k] != mine) continue;
        std::string other = "row " + std::to_string(k);
        for (const Chunk& x : plan.chunks)
          if (x.logits_row == int(k)) other = x.logits_name;
        out.push_back(who + "the logits of " + ch.logits_name + " equal, bit for bit, the expected logits of " + other + ".");
        break;
      }
      return false;
    }
  }
  return !el || logits_ok.empty() || std::all_of(logits_ok.begin(), logits_ok.end(), [](bool b) { return b; });
}

Lines localize_gpt2_run(const Fixture& fx, const json& actual) {
  Lines out;
  RunPlan plan;
  if (fx.adapter == "run_decode") {
    plan.attention = "attend_one";
    const int n = int(ints_of(fx.input.value("tokens", json())).size());
    for (int p = 0; p < n; ++p) plan.chunks.push_back({p, p + 1, p, "step " + std::to_string(p)});
    localize_run(fx.expected, actual, "logits", plan, "", out);
    return out;
  }
  plan.attention = "attend_causal";
  if (fx.adapter == "run_prefill") {
    int at = 0, c = 0;
    for (const json& chunk : fx.input.value("chunks", json::array())) {
      const int n = int(ints_of(chunk).size());
      plan.chunks.push_back({at, at + n, c, "chunk " + std::to_string(c)});
      at += n;
      ++c;
    }
    localize_run(fx.expected, actual, "logits", plan, "", out);
    return out;
  }
  // run_prefix_reuse: the saved cache's rows right after each continuation, each
  // continuation (its prefix part, then its suffix), then the saved cache at the end and
  // the prefix's logits.
  const int n_prefix = int(ints_of(fx.input.value("prefix", json())).size());
  const json& suffixes = fx.input.value("suffixes", json::array());
  const json& e_cont = fx.expected.value("continued", json::array());
  const json a_cont = actual.is_object() ? actual.value("continued", json()) : json();
  if (!same_count_of_continuations(e_cont, a_cont, out)) return out;
  const json& e_rows = fx.expected.value("saved_rows_after_each", json::array());
  const json a_rows = actual.value("saved_rows_after_each", json());
  // The saved cache's rows are read right after each continuation; the continuations'
  // caches when the call returns.
  for (size_t i = 0; i < e_cont.size(); ++i) {
    if (i < e_rows.size() && !rows_as_expected(e_rows[i], a_rows.is_array() && i < a_rows.size() ? a_rows[i] : json(),
                                               "Right after continuation " + std::to_string(i) + ", the saved cache's rows (save_prefix of the " +
                                                   std::to_string(n_prefix) + "-token prefix must leave " +
                                                   count_text(n_prefix, "position") + ", and no continuation may change them)",
                                               out))
      return out;
  }
  for (size_t i = 0; i < e_cont.size(); ++i) {
    const int n = int(ints_of(suffixes[i]).size());
    plan.chunks = {{0, n_prefix, -1, ""}, {n_prefix, n_prefix + n, 0, "the continuation"}};
    const std::string who = "Continuation " + std::to_string(i) + " (" + std::to_string(n_prefix) + " prefix + " +
                            std::to_string(n) + " suffix positions, read when the call returned): ";
    if (!localize_run(e_cont[i], a_cont[i], "logits", plan, who, out)) {
      // Continued logits that are, bit for bit, the saved prefix's.
      std::optional<Digest> saved = digest_at(fx.expected, "prefix_logits");
      std::optional<Tensor> mine = tensor_at(a_cont[i], "logits");
      if (saved && mine && !saved->rows.empty() && int64_t(mine->data.size()) == saved->row_size &&
          row_digest(mine->data.data(), mine->data.size()) == saved->rows.front())
        out.push_back(who + "its logits equal, bit for bit, the saved prefix's (the logits of the prefix's last position).");
      return out;
    }
  }
  plan.chunks = {{0, n_prefix, -1, ""}};
  if (!localize_run(fx.expected.value("saved", json()), actual.value("saved", json()), nullptr, plan,
                    "The saved cache at the end: ", out))
    return out;
  std::optional<Digest> el = digest_at(fx.expected, "prefix_logits");
  std::optional<Tensor> al = tensor_at(actual, "prefix_logits");
  if (el && (!al || al->shape != el->shape || !rows_matching(*el, *al).front()))
    out.push_back("Every cache is right; the saved prefix's logits (its last position's) differ.");
  return out;
}

}  // namespace course
