// Localization of the cache adapters (one layer's KVCache, the twelve layers' ModelCache).
//
// The plans' appended values say where they came from (gen/cases.hpp, describing_row): append #a's
// key holds a*768 + h*64 + d + 1 at head h, dim d, and its value minus that. So a wrong
// float can be read back as "append #2's key, head 1, dim 0", and a wrong 64-float band as
// "head 1's band where head 0's belongs", "append #2's row", "the value, not the key".
#include <cmath>
#include <map>

#include "judge/localize.hpp"
#include "wire/shape.hpp"

namespace course {

namespace {

constexpr int kHeads = shape::kHeads, kDim = shape::kHeadDim, kDModel = shape::kDModel;

// Where a stage-1 float came from.
struct Origin {
  bool known = false;
  bool key = true;
  int append = 0, head = 0, dim = 0;
};

Origin origin_of(float x, int n_appends) {
  Origin o;
  if (!std::isfinite(x) || x == 0.0f || x != std::floor(x)) return o;
  const double m = std::fabs(double(x)) - 1;
  if (m < 0 || m >= double(n_appends) * kDModel) return o;
  const int i = int(m);
  o = {true, x > 0, i / kDModel, (i % kDModel) / kDim, i % kDim};
  return o;
}

std::string kind(bool key) { return key ? "key" : "value"; }

// "append #2's key, head 1" (a band), with ", dim 5" for a single float.
std::string origin_text(const Origin& o, bool with_dim) {
  if (!o.known) return "a value no append put there";
  return "append #" + std::to_string(o.append) + "'s " + kind(o.key) + ", head " + std::to_string(o.head) +
         (with_dim ? ", dim " + std::to_string(o.dim) : "");
}

// Which appends a plan put where: per cache, the append ids it holds in position order
// (after any crop), and per append, the cache it was sent to.
struct PlanHistory {
  std::vector<std::vector<int>> holds;
  std::vector<std::string> story;  // per cache: how it came about
  std::vector<int> append_cache;
  // Per cache, the appends a crop removed from it: append id -> {position, step}.
  std::vector<std::map<int, std::pair<int, int>>> cropped;
  // Whether the snapshot was read through the learner's adapter (a plan) or by the grader
  // itself through key() and value() (read_kvcache).
  bool by_adapter = true;
};

PlanHistory replay(const json& plan) {
  PlanHistory h;
  if (!plan.is_array()) return h;
  for (size_t step = 0; step < plan.size(); ++step) {
    const json& op = plan[step];
    const std::string what = op.value("op", "");
    const int c = op.value("cache", -1);
    const bool named = c >= 0 && c < int(h.holds.size());
    if (what == "create") {
      h.holds.emplace_back();
      h.cropped.emplace_back();
      h.story.push_back("created empty at step " + std::to_string(step));
    } else if (what == "append" && named) {
      h.holds[size_t(c)].push_back(int(h.append_cache.size()));
      h.append_cache.push_back(c);
    } else if (what == "clone" && named) {
      h.holds.push_back(h.holds[size_t(c)]);
      h.cropped.emplace_back();
      h.story.push_back("cloned from cache " + std::to_string(c) + " at step " + std::to_string(step) +
                        ", when it held " + count_text(int64_t(h.holds.back().size()), "position"));
    } else if (what == "crop" && named) {  // stage rollback: keeps the first n positions
      const int n = op.value("n", -1);
      std::vector<int>& held = h.holds[size_t(c)];
      if (n >= 0 && size_t(n) <= held.size()) {
        for (size_t p = size_t(n); p < held.size(); ++p) h.cropped[size_t(c)][held[p]] = {int(p), int(step)};
        held.resize(size_t(n));
        h.story[size_t(c)] += ", cropped to " + count_text(n, "position") + " at step " + std::to_string(step);
      }
    }
  }
  return h;
}

// "appends #0, #1, #3", "appends #0 .. #19", "no appends".
std::string appends_text(const std::vector<int>& ids) {
  if (ids.empty()) return "no appends";
  std::string s;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    s += (s.empty() ? "#" : ", #") + std::to_string(ids[i]) + (j >= i + 2 ? " .. #" + std::to_string(ids[j]) : "");
    if (j == i + 1) s += ", #" + std::to_string(ids[j]);
    i = j + 1;
  }
  return (ids.size() == 1 ? "append " : "appends ") + s;
}

// What a 64-float row read at (head, pos) holds, and how it relates to what belongs there.
std::string row_story(const float* row, const Origin& want, int n_appends, const PlanHistory& h, int cache) {
  const Origin first = origin_of(row[0], n_appends);
  bool band = first.known && first.dim == 0;
  for (int d = 1; d < kDim && band; ++d) {
    Origin o = origin_of(row[d], n_appends);
    band = o.known && o.key == first.key && o.append == first.append && o.head == first.head && o.dim == d;
  }
  bool zeros = true;
  for (int d = 0; d < kDim; ++d) zeros = zeros && row[d] == 0.0f;
  if (zeros) return "holds 64 zeros";
  if (!band) {
    for (int d = 0; d < kDim; ++d) {
      Origin o = origin_of(row[d], n_appends);
      Origin w = want;
      w.dim = d;
      if (!(o.known && o.key == w.key && o.append == w.append && o.head == w.head && o.dim == d))
        return "dim " + std::to_string(d) + " holds " + format_float(row[d], row[d]) + ": " + origin_text(o, true);
    }
  }
  std::string s = "holds " + origin_text(first, false);
  if (first.key != want.key && first.append == want.append && first.head == want.head)
    return s + ": this is the " + kind(first.key) + ", not the " + kind(want.key);
  if (first.append == want.append && first.key == want.key)
    return s + ": head " + std::to_string(first.head) + "'s band where head " + std::to_string(want.head) + "'s belongs";
  s += " where append #" + std::to_string(want.append) + "'s " + kind(want.key) + ", head " +
       std::to_string(want.head) + " belongs";
  if (first.append < int(h.append_cache.size())) {
    const int went = h.append_cache[size_t(first.append)];
    const auto& mine = h.holds[size_t(cache)];
    int at = -1;
    for (size_t p = 0; p < mine.size(); ++p)
      if (mine[p] == first.append) at = int(p);
    const auto& gone = h.cropped[size_t(cache)];
    const auto dropped = gone.find(first.append);
    if (at >= 0)
      s += " (append #" + std::to_string(first.append) + " is this cache's position " + std::to_string(at) + ")";
    else if (dropped != gone.end())
      s += " (append #" + std::to_string(first.append) + " was this cache's position " +
           std::to_string(dropped->second.first) + "; the crop at step " + std::to_string(dropped->second.second) +
           " should have removed it)";
    else if (went == cache)
      s += " (append #" + std::to_string(first.append) + " went to this cache, and is not among the positions it keeps)";
    else
      s += " (append #" + std::to_string(first.append) + " went to cache " + std::to_string(went) +
           ", and this cache never held it)";
  }
  return s;
}

// One tensor of a snapshot ("keys" or "values") against the expected one.
void tensor_story(const json& e, const json& a, const char* name, bool key, const PlanHistory& h, int cache,
                  const std::string& who, Lines& out) {
  std::optional<Tensor> et = tensor_at(e, name), at = tensor_at(a, name);
  if (!et) return;
  if (!at) {
    out.push_back(who + std::string(name) + ": not a tensor.");
    return;
  }
  if (at->shape != et->shape) {
    out.push_back(who + name + ": " + std::to_string(at->data.size()) + " floats, where [12, " +
                  std::to_string(et->shape[1]) + ", 64] = " + std::to_string(et->data.size()) +
                  " were expected. Nothing more is read from them.");
    return;
  }
  const int seq = int(et->shape[1]);
  int bad_rows = 0, first_h = -1, first_p = -1;
  for (int hd = 0; hd < kHeads; ++hd)
    for (int p = 0; p < seq; ++p) {
      const size_t at0 = (size_t(hd) * size_t(seq) + size_t(p)) * kDim;
      bool same = true;
      for (int d = 0; d < kDim; ++d) same = same && at->data[at0 + size_t(d)] == et->data[at0 + size_t(d)];
      if (same) continue;
      if (bad_rows++ == 0) first_h = hd, first_p = p;
    }
  if (bad_rows == 0) {
    out.push_back(who + name + ": all right.");
    return;
  }
  const auto& mine = h.holds[size_t(cache)];
  Origin want{true, key, first_p < int(mine.size()) ? mine[size_t(first_p)] : 0, first_h, 0};
  const size_t at0 = (size_t(first_h) * size_t(seq) + size_t(first_p)) * kDim;
  const int right_before = first_h * seq + first_p;
  // A plan's snapshot is what the learner's adapter returned; read_kvcache's is what
  // key() and value() returned to the grader.
  const std::string place = h.by_adapter ? "your snapshot's " + std::string(key ? "keys" : "values") + "[head " +
                                               std::to_string(first_h) + ", pos " + std::to_string(first_p) + "]"
                                         : std::string(key ? "key" : "value") + "(" + std::to_string(first_h) + ", " +
                                               std::to_string(first_p) + ")";
  out.push_back(who + place + " " + row_story(at->data.data() + at0, want, int(h.append_cache.size()), h, cache) +
                ". " + (right_before ? "The " + count_text(right_before, "row") + " before it in [head, pos] order " +
                                           (right_before == 1 ? "is" : "are") + " right; "
                                     : "") +
                std::to_string(bad_rows) + " of " + count_text(kHeads * seq, "row") + " differ.");
}

// One snapshot {"shape", "keys", "values"} against the expected one.
void snapshot_story(const json& e, const json& a, const PlanHistory& h, int cache, const std::string& who, Lines& out) {
  if (!a.is_object() || !a.contains("shape")) {
    out.push_back(who + "has no \"shape\".");
    return;
  }
  std::string problem = shape_row_problem(a["shape"]);
  if (!problem.empty()) {
    out.push_back(who + "its shape " + problem + ". Nothing more is read from this snapshot.");
    return;
  }
  const int e_len = e["shape"][1].get<int>(), a_len = a["shape"][1].get<int>();
  if (a_len != e_len) {
    out.push_back(who + "reports " + count_text(a_len, "position") + " where it should hold " + std::to_string(e_len) +
                  " (" + appends_text(h.holds[size_t(cache)]) + "). Nothing more is read from this snapshot.");
    return;
  }
  tensor_story(e, a, "keys", true, h, cache, who, out);
  tensor_story(e, a, "values", false, h, cache, who, out);
}

}  // namespace

Lines localize_cache_plan(const Fixture& fx, const json& actual) {
  Lines out;
  PlanHistory h = replay(fx.input.value("plan", json()));
  const json& e = fx.expected.value("caches", json::array());
  const json a = actual.is_object() ? actual.value("caches", json()) : json();
  if (!a.is_array() || a.size() != e.size() || h.holds.size() != e.size()) {
    out.push_back("The plan creates " + std::to_string(e.size()) + " caches; the output has " +
                  (a.is_array() ? std::to_string(a.size()) + " snapshots" : std::string("no list of snapshots")) +
                  ". Nothing more is read from it.");
    return out;
  }
  for (size_t c = 0; c < e.size(); ++c) {
    if (e[c] == a[c] || compare_outputs(e[c], a[c]).empty()) continue;
    const std::string who = "Cache " + std::to_string(c) + " ";
    out.push_back((c == 1 ? "Cache 0 is right. " : c > 1 ? "Caches " + range_text(0, int(c) - 1) + " are right. " : std::string()) + who + "(" + h.story[c] +
                  ") should hold " + appends_text(h.holds[c]) + ".");
    snapshot_story(e[c], a[c], h, int(c), "Cache " + std::to_string(c) + ": ", out);
    std::vector<int> later;
    for (size_t d = c + 1; d < e.size(); ++d)
      if (!compare_outputs(e[d], a[d]).empty()) later.push_back(int(d));
    if (!later.empty()) out.push_back("Later caches that differ too: " + index_list(later) + ".");
    break;
  }
  return out;
}

Lines localize_read_kvcache(const Fixture& fx, const json& actual) {
  Lines out;
  PlanHistory h;
  const int n = fx.expected.contains("shape") ? fx.expected["shape"][1].get<int>() : 0;
  h.holds.emplace_back();
  for (int a = 0; a < n; ++a) {
    h.holds[0].push_back(a);
    h.append_cache.push_back(0);
  }
  h.story.push_back("made by the grader");
  h.cropped.emplace_back();
  h.by_adapter = false;
  out.push_back("The grader appended " + std::to_string(n) +
                " positions to one KVCache and read it through length(), key(h, p) and value(h, p), without your adapter.");
  snapshot_story(fx.expected, actual, h, 0, "", out);
  return out;
}

Lines localize_model_cache(const Fixture& fx, const json& actual) {
  Lines out;
  auto ints = [](const json& j) {
    std::vector<int> v;
    if (j.is_array())
      for (const auto& x : j)
        if (x.is_number_integer()) v.push_back(x.get<int>());
    return v;
  };
  auto count = [](const std::vector<int>& layers, int l) {
    int n = 0;
    for (int x : layers) n += x == l;
    return n;
  };
  if (fx.input.contains("appends")) {
    const std::vector<int> appends = ints(fx.input["appends"]);
    const json rows = actual.is_object() ? actual.value("rows", json()) : json();
    bool readable = false;
    if (rows_as_expected(fx.expected["rows"], rows, "The shape rows", out, &readable) || !readable) return out;
    std::vector<int> a = shape_row_lengths(rows), e = shape_row_lengths(fx.expected["rows"]);
    for (int l = 0; l < int(e.size()); ++l)
      if (a[size_t(l)] != e[size_t(l)]) {
        out.push_back("The input makes " + count_text(count(appends, l), "append") + " to layer " + std::to_string(l) +
                      ", " + std::to_string(appends.size()) + " to all layers together.");
        break;
      }
    return out;
  }
  const std::vector<int> before = ints(fx.input.value("before", json())),
                         after_o = ints(fx.input.value("after_original", json())),
                         after_c = ints(fx.input.value("after_clone", json()));
  const char* sides[2] = {"original", "clone"};
  for (int side = 0; side < 2; ++side) {
    const std::string name = side ? "The copy's rows" : "The original's rows";
    const json rows = actual.is_object() ? actual.value(sides[side], json()) : json();
    bool readable = false;
    if (rows_as_expected(fx.expected[sides[side]], rows, name, out, &readable)) continue;
    if (!readable) return out;
    std::vector<int> a = shape_row_lengths(rows), e = shape_row_lengths(fx.expected[sides[side]]);
    for (int l = 0; l < int(e.size()); ++l)
      if (a[size_t(l)] != e[size_t(l)]) {
        out.push_back("Layer " + std::to_string(l) + " got " + count_text(count(before, l), "append") +
                      " before the clone, then " + std::to_string(count(after_o, l)) + " on the original and " +
                      std::to_string(count(after_c, l)) + " on the copy.");
        break;
      }
    return out;
  }
  return out;
}

}  // namespace course
