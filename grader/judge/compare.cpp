#include "judge/compare.hpp"

#include "wire/digest.hpp"
#include "wire/json_bounded.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>

namespace course {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string shortest(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

bool same(float a, float b) { return a == b; }  // NaN never equals; +0 equals -0

bool is_shape_rows(const json& j) {
  if (!j.is_array() || j.empty()) return false;
  for (const auto& row : j) {
    if (!row.is_array() || row.size() != 3) return false;
    for (const auto& x : row)
      if (!x.is_number_integer()) return false;
  }
  return true;
}

// "[12, 3, 64]": a list of plain values on one line, cut after a few entries.
std::string row_text(const json& row) { return row.is_array() ? json_excerpt(row, 60) : short_json(row, 60); }

// What a difference explains, most first: a count, a length, a table or a list's size
// (0), a tensor of the wrong shape (1), a tensor's values (2), anything else, such as a hex
// key or a float (3). The report lists differences in this order, so the lines that say
// the most come before raw values.
int explanation_rank(const json& expected) {
  if (is_digest(expected) || is_tensor(expected)) return 2;
  if (expected.is_number_integer() || expected.is_boolean() || is_shape_rows(expected)) return 0;
  if (expected.is_array()) return 0;  // a list of ids, or a list whose size differs
  return 3;
}

void compare_into(const std::string& path, const json& expected, const json& actual, int depth,
                  std::vector<Mismatch>& out) {
  auto add = [&](std::string summary) {
    Mismatch m;
    m.path = path;
    m.summary = std::move(summary);
    m.data = {{"path", path}, {"summary", m.summary}};
    m.rank = expected.is_object() && !is_tensor(expected) && !is_digest(expected) ? 0 : explanation_rank(expected);
    out.push_back(std::move(m));
  };
  // Both documents come through parse_json_bounded; this guard keeps the recursion
  // bounded for any caller.
  if (depth > kMaxJsonDepth) return add("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels; not compared");
  if (is_digest(expected)) {
    if (!is_tensor(actual)) return add("expected a tensor, got " + short_json(actual));
    Tensor a;
    try {
      a = tensor_from_json(actual);
    } catch (const TensorError& err) {
      return add(std::string("the returned tensor is malformed: ") + err.what());
    }
    for (auto& m : compare_digest(path, digest_from_json(expected), a)) out.push_back(std::move(m));
    return;
  }
  if (is_tensor(expected)) {
    if (!is_tensor(actual)) return add("expected a tensor, got " + short_json(actual));
    Tensor e = tensor_from_json(expected);
    Tensor a;
    try {
      a = tensor_from_json(actual);
    } catch (const TensorError& err) {
      return add(std::string("the returned tensor is malformed: ") + err.what());
    }
    if (a.axes.empty()) a.axes = e.axes;
    for (auto& m : compare_tensors(path, e, a)) out.push_back(std::move(m));
    return;
  }
  if (is_shape_rows(expected)) {
    for (auto& m : compare_shape_rows(path, expected, actual)) out.push_back(std::move(m));
    return;
  }
  if (expected.is_object()) {
    if (!actual.is_object()) return add("expected an object, got " + short_json(actual));
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      std::string child = path.empty() ? it.key() : path + "." + it.key();
      if (!actual.contains(it.key())) {
        Mismatch m;
        m.path = child;
        m.rank = 0;
        m.summary = "missing from the output";
        m.data = {{"path", child}, {"summary", m.summary}};
        out.push_back(std::move(m));
        continue;
      }
      compare_into(child, it.value(), actual[it.key()], depth + 1, out);
    }
    return;
  }
  if (expected.is_array() && !expected.empty() &&
      std::all_of(expected.begin(), expected.end(), [](const json& x) { return x.is_number_integer(); })) {
    if (expected != actual) add("expected " + row_text(expected) + ", got " + (actual.is_array() ? row_text(actual) : short_json(actual)));
    return;
  }
  if (expected.is_array()) {
    if (!actual.is_array()) return add("expected a list, got " + short_json(actual));
    if (expected.size() != actual.size())
      return add("expected " + std::to_string(expected.size()) + " entries, got " + std::to_string(actual.size()));
    for (size_t i = 0; i < expected.size(); ++i)
      compare_into(path + "[" + std::to_string(i) + "]", expected[i], actual[i], depth + 1, out);
    return;
  }
  float e, a;
  if (expected.is_number_float() && json_to_float(expected, e) && actual.is_number()) {
    if (!json_to_float(actual, a)) return add("expected " + shortest(e) + ", got " + short_json(actual) + ", beyond float32's range");
    if (!same(e, a)) add("expected " + format_float(e, a) + ", got " + format_float(a, e));
    return;
  }
  if (expected != actual) add("expected " + short_json(expected) + ", got " + short_json(actual));
}

}  // namespace

std::string coordinates(const Tensor& t, int64_t flat) {
  std::vector<int64_t> idx(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    int64_t n = t.shape[d] > 0 ? t.shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d) s += ", ";
    s += (d < t.axes.size() ? t.axes[d] : "d" + std::to_string(d)) + " " + std::to_string(idx[d]);
  }
  return s;
}

std::string format_float(float f, float other) {
  std::string text = shortest(f);
  char a[32], b[32];
  std::snprintf(a, sizeof a, "%.6g", double(f));
  std::snprintf(b, sizeof b, "%.6g", double(other));
  const bool differ = std::memcmp(&f, &other, sizeof f) != 0;
  if (differ && (std::strcmp(a, b) == 0 || text == shortest(other))) text += " (bits " + float_bits_hex(f) + ")";
  return text;
}

namespace {

// Containers nested deeper than this are shown as [...] or {...}.
constexpr int kShortJsonDepth = 8;

void append_short(const json& j, size_t max_chars, int depth, std::string& s) {
  if (is_tensor(j)) {
    s += "<float32 " + json_excerpt(j["shape"], 40) + ">";
  } else if (j.is_structured() && !j.empty() && depth >= kShortJsonDepth) {
    s += j.is_array() ? "[...]" : "{...}";
  } else if (j.is_structured()) {
    s += j.is_array() ? "[" : "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end() && s.size() <= max_chars; ++it) {
      s += first ? "" : ", ";
      first = false;
      if (j.is_object()) s += json_excerpt(json(it.key()), max_chars) + ": ";
      append_short(it.value(), max_chars, depth + 1, s);
    }
    s += j.is_array() ? "]" : "}";
  } else {
    s += json_excerpt(j, max_chars);
  }
}

}  // namespace

std::string short_json(const json& j, size_t max_chars) {
  max_chars = std::max<size_t>(max_chars, 8);
  std::string s;
  append_short(j, max_chars, 0, s);
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

namespace {

// A tensor of the wrong shape: nothing more is compared.
Mismatch shape_mismatch(const std::string& path, const std::vector<int64_t>& expected,
                        const std::vector<int64_t>& actual) {
  Mismatch m;
  m.path = path;
  m.rank = 1;
  m.summary = "shape " + shape_text(actual) + ", expected " + shape_text(expected);
  // Rows of the expected length, counted: the same words whatever shape the rows came in
  // ([251285] and [1, 251285] are both 5 rows of 50257).
  int64_t n_actual = 1, n_expected = 1;
  for (int64_t d : actual) n_actual *= d;
  for (int64_t d : expected) n_expected *= d;
  const int64_t row = expected.empty() ? 0 : expected.back();
  if (row > 1 && !actual.empty() && actual.back() != row && n_actual > 0 && n_actual % row == 0) {
    const int64_t rows = n_actual / row, want = n_expected / row;
    m.summary += ": " + std::to_string(n_actual) + " = " + std::to_string(rows) + " x " + std::to_string(row) +
                 " values, " + std::to_string(rows) + (rows == 1 ? " row" : " rows") + " of " + std::to_string(row) +
                 " where " + std::to_string(want) + (want == 1 ? " is" : " are") + " expected";
  }
  m.data = {{"path", path}, {"summary", m.summary}, {"expected_shape", expected}, {"actual_shape", actual}};
  return m;
}

}  // namespace

std::vector<Mismatch> compare_tensors(const std::string& path, const Tensor& e, const Tensor& a) {
  if (e.shape != a.shape) return {shape_mismatch(path, e.shape, a.shape)};
  Mismatch m;
  m.path = path;
  int64_t count = 0, first = -1;
  double max_abs = 0, max_rel = 0, max_expected = 0;
  for (float x : e.data)
    if (std::isfinite(x)) max_expected = std::max(max_expected, std::fabs(double(x)));
  std::vector<int64_t> shown;
  for (int64_t i = 0; i < int64_t(e.data.size()); ++i) {
    float x = e.data[size_t(i)], y = a.data[size_t(i)];
    if (same(x, y)) continue;
    ++count;
    if (first < 0) first = i;
    if (shown.size() < 5) shown.push_back(i);
    double diff = std::isnan(y) || std::isnan(x) ? INFINITY : std::fabs(double(x) - double(y));
    max_abs = std::max(max_abs, diff);
    double scale = std::max(std::fabs(double(x)), std::fabs(double(y)));
    if (scale > 0) max_rel = std::max(max_rel, diff / scale);
  }
  if (count == 0) return {};
  std::ostringstream summary;
  summary << count << " of " << e.data.size() << " values differ; first at " << coordinates(e, first)
          << ": expected " << format_float(e.data[size_t(first)], a.data[size_t(first)]) << ", got "
          << format_float(a.data[size_t(first)], e.data[size_t(first)]) << "; max |diff| " << max_abs;
  m.summary = summary.str();
  std::ostringstream detail;
  // A few values around the first mismatch, marked, so a pattern is easy to see.
  int64_t from = std::max<int64_t>(0, first - 2), to = std::min<int64_t>(int64_t(e.data.size()), first + 4);
  for (int64_t i = from; i < to; ++i) {
    float x = e.data[size_t(i)], y = a.data[size_t(i)];
    detail << (same(x, y) ? "  ok  " : "  BAD ") << coordinates(e, i) << ": expected " << format_float(x, y)
           << ", got " << format_float(y, x) << "\n";
  }
  m.detail = detail.str();
  json first_coords = json::object();
  {
    int64_t flat = first;
    std::vector<int64_t> idx(e.shape.size());
    for (size_t d = e.shape.size(); d-- > 0;) {
      idx[d] = flat % std::max<int64_t>(1, e.shape[d]);
      flat /= std::max<int64_t>(1, e.shape[d]);
    }
    for (size_t d = 0; d < idx.size(); ++d) first_coords[d < e.axes.size() ? e.axes[d] : "d" + std::to_string(d)] = idx[d];
  }
  m.data = {{"path", path},
            {"summary", m.summary},
            {"mismatches", count},
            {"size", e.data.size()},
            {"first", first_coords},
            {"expected", shortest(e.data[size_t(first)])},
            {"actual", shortest(a.data[size_t(first)])},
            {"max_abs_diff", std::isinf(max_abs) ? json("inf") : json(max_abs)},
            {"max_rel_diff", std::isinf(max_rel) ? json("inf") : json(max_rel)},
            {"max_abs_expected", max_expected}};
  return {m};
}

std::vector<Mismatch> compare_shape_rows(const std::string& path, const json& expected, const json& actual) {
  Mismatch m;
  m.path = path;
  m.rank = 0;
  bool rows_ok = actual.is_array();
  if (rows_ok && actual == expected) return {};
  const size_t n_actual = rows_ok ? actual.size() : 0;
  // One line per expected row, and a few of any extra rows the output has.
  const size_t n = std::max(expected.size(), std::min(n_actual, expected.size() + 4));
  std::ostringstream detail;
  detail << "  layer  expected        actual\n";
  int differing = 0;
  json bad = json::array();
  for (size_t i = 0; i < n; ++i) {
    std::string e = i < expected.size() ? row_text(expected[i]) : "-";
    std::string a = rows_ok && i < actual.size() ? row_text(actual[i]) : "-";
    bool diff = e != a;
    differing += diff;
    if (diff) bad.push_back(i);
    char line[160];
    std::snprintf(line, sizeof line, "  %-6zu %-15s %-15s%s\n", i, e.c_str(), a.c_str(), diff ? "  <- differs" : "");
    detail << line;
  }
  if (n_actual > n) detail << "  ... and " << (n_actual - n) << " more rows\n";
  if (!rows_ok) {
    m.summary = "expected " + std::to_string(expected.size()) + " shape rows, got " + short_json(actual);
  } else if (actual.size() != expected.size()) {
    m.summary = "expected " + std::to_string(expected.size()) + " shape rows, got " + std::to_string(actual.size());
  } else {
    m.summary = std::to_string(differing) + " of " + std::to_string(expected.size()) + " shape rows differ";
  }
  m.detail = detail.str();
  // The output's rows go into the results as they are only when they are a few short rows.
  const bool small = rows_ok && n_actual <= expected.size() + 4 && is_shape_rows(actual);
  m.data = {{"path", path},
            {"summary", m.summary},
            {"expected", expected},
            {"actual", small ? actual : json(short_json(actual))},
            {"differing_rows", bad}};
  return {m};
}

namespace {

// What the rows of a digest comparison show: how many differ, the first, and over the
// sampled values of the differing rows, the largest differences.
struct DigestStats {
  int64_t bad_rows = 0, first = -1;
  double max_abs = 0, max_rel = 0, max_expected = 0;
  int64_t sample_mismatches = 0;
};

DigestStats digest_stats(const Digest& e, const Tensor& actual, const std::vector<bool>& ok) {
  DigestStats st;
  for (size_t r = 0; r < ok.size(); ++r) {
    for (size_t i = 0; i < e.sample_index.size(); ++i)
      st.max_expected = std::max(st.max_expected, std::fabs(double(e.samples[r][i])));
    if (ok[r]) continue;
    ++st.bad_rows;
    if (st.first < 0) st.first = int64_t(r);
    for (size_t i = 0; i < e.sample_index.size(); ++i) {
      float x = e.samples[r][i], y = actual.data[r * size_t(e.row_size) + size_t(e.sample_index[i])];
      if (same(x, y)) continue;
      ++st.sample_mismatches;
      double diff = std::isnan(y) ? INFINITY : std::fabs(double(x) - double(y));
      st.max_abs = std::max(st.max_abs, diff);
      double scale = std::max(std::fabs(double(x)), std::fabs(double(y)));
      if (scale > 0) st.max_rel = std::max(st.max_rel, diff / scale);
    }
  }
  return st;
}

// The first differing row's sampled values: where they differ (up to 8), and the first
// three whatever they are; the rest of the row is known only through its digest.
std::string first_row_samples(const Digest& e, const Tensor& actual, const Tensor& shape_only, int64_t first) {
  const size_t row0 = size_t(first) * size_t(e.row_size);
  std::ostringstream detail;
  int shown = 0;
  for (size_t i = 0; i < e.sample_index.size(); ++i) {
    float x = e.samples[size_t(first)][i], y = actual.data[row0 + size_t(e.sample_index[i])];
    if (!same(x, y) || shown < 3) {
      if (shown < 8)
        detail << (same(x, y) ? "  ok  " : "  BAD ") << coordinates(shape_only, int64_t(row0) + e.sample_index[i])
               << ": expected " << format_float(x, y) << ", got " << format_float(y, x) << "\n";
      ++shown;
    }
  }
  return detail.str();
}

// The index of the largest value of row `row` (the first, on ties).
int64_t row_argmax(const Tensor& actual, int64_t row, int64_t row_size) {
  const size_t row0 = size_t(row) * size_t(row_size);
  int64_t best = 0;
  for (int64_t i = 1; i < row_size; ++i)
    if (actual.data[row0 + size_t(i)] > actual.data[row0 + size_t(best)]) best = i;
  return best;
}

// {"axis": index, ...} of a row: the coordinates of its first element but the last.
json row_coordinates(const Tensor& shape_only, int64_t row, int64_t row_size) {
  const std::vector<int64_t>& shape = shape_only.shape;
  int64_t flat = row * row_size;
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % std::max<int64_t>(1, shape[d]);
    flat /= std::max<int64_t>(1, shape[d]);
  }
  json coords = json::object();
  for (size_t d = 0; d + 1 < idx.size(); ++d)
    coords[d < shape_only.axes.size() ? shape_only.axes[d] : "d" + std::to_string(d)] = idx[d];
  return coords;
}

}  // namespace

std::vector<Mismatch> compare_digest(const std::string& path, const Digest& e, const Tensor& actual) {
  if (e.shape != actual.shape) return {shape_mismatch(path, e.shape, actual.shape)};
  Mismatch m;
  m.path = path;
  Tensor shape_only;  // for coordinates(): the digest's shape and axes
  shape_only.shape = e.shape;
  shape_only.axes = e.axes;
  if (shape_only.axes.empty() && !actual.axes.empty()) shape_only.axes = actual.axes;
  const std::vector<bool> ok = rows_matching(e, actual);
  const DigestStats st = digest_stats(e, actual, ok);
  if (st.bad_rows == 0) return {};
  const size_t first = size_t(st.first);
  std::ostringstream summary, detail;
  if (e.shape.size() == 1) {
    summary << "the " << e.row_size << " values differ (digest)";
  } else {
    const std::string at = coordinates(shape_only, st.first * e.row_size);
    summary << st.bad_rows << " of " << ok.size() << " rows of " << e.row_size << " values differ; first at "
            << at.substr(0, at.rfind(','));
  }
  detail << first_row_samples(e, actual, shape_only, st.first);
  const int64_t actual_argmax = e.argmax.empty() ? -1 : row_argmax(actual, st.first, e.row_size);
  if (!e.argmax.empty()) {
    detail << "  largest value at index " << e.argmax[first] << " expected, at " << actual_argmax
           << (actual_argmax == e.argmax[first] ? " (same)" : " (differs)") << "\n";
  }
  if (st.sample_mismatches > 0) {
    summary << "; sampled values: max |diff| " << st.max_abs;
  } else {
    summary << "; the sampled values agree, other values of the row differ";
    detail << "  (the fixture keeps a digest of every row and " << e.sample_index.size()
           << " sampled values per row; the differing values are not among the samples)\n";
  }
  m.summary = summary.str();
  m.detail = detail.str();
  json differing = json::array();
  for (size_t r = 0; r < ok.size(); ++r)
    if (!ok[r]) differing.push_back(r);
  m.data = {{"path", path},
            {"summary", m.summary},
            {"kind", "digest"},
            {"rows_differing", st.bad_rows},
            {"rows", ok.size()},
            {"differing_rows", differing},
            {"first_row", row_coordinates(shape_only, st.first, e.row_size)},
            {"sampled_mismatches", st.sample_mismatches},
            {"max_abs_diff", std::isinf(st.max_abs) ? json("inf") : json(st.max_abs)},
            {"max_rel_diff", std::isinf(st.max_rel) ? json("inf") : json(st.max_rel)},
            {"max_abs_expected", st.max_expected}};
  if (!e.argmax.empty()) {
    m.data["expected_argmax"] = e.argmax[first];
    m.data["actual_argmax"] = actual_argmax;
  }
  return {m};
}

std::vector<Mismatch> compare_outputs(const json& expected, const json& actual) {
  std::vector<Mismatch> out;
  compare_into("", expected, actual, 0, out);
  std::stable_sort(out.begin(), out.end(), [](const Mismatch& a, const Mismatch& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace course
