#include "wire/digest.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace course {

bool is_digest(const json& j) {
  return j.is_object() && j.contains("digest") && j.contains("rows");
}

namespace {

// FNV-1a 64, fed little-endian words.
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void byte(uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  void u32(uint32_t x) {
    for (int b = 0; b < 4; ++b) byte(uint8_t(x >> (8 * b)));
  }
  void u64(uint64_t x) {
    for (int b = 0; b < 8; ++b) byte(uint8_t(x >> (8 * b)));
  }
  void text(const std::string& s) {
    u64(s.size());
    for (char c : s) byte(uint8_t(c));
  }
  // -0 as +0, every NaN as one quiet NaN.
  void floats(const float* data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      float f = data[i];
      uint32_t bits;
      if (f == 0.0f) {
        bits = 0;
      } else if (std::isnan(f)) {
        bits = 0x7fc00000u;
      } else {
        std::memcpy(&bits, &f, sizeof bits);
      }
      u32(bits);
    }
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
  }
};

void digest_value(Fnv& fnv, const json& expected, const json& actual) {
  auto other = [&] {
    fnv.byte('X');
    fnv.text(actual.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  if (is_tensor(expected) || is_digest(expected)) {
    if (!is_tensor(actual)) return other();
    Tensor t;
    try {
      t = tensor_from_json(actual);
    } catch (const TensorError&) {
      return other();
    }
    fnv.byte('T');
    fnv.u64(t.shape.size());
    for (int64_t d : t.shape) fnv.u64(uint64_t(d));
    fnv.floats(t.data.data(), t.data.size());
  } else if (expected.is_object()) {
    if (!actual.is_object()) return other();
    fnv.byte('O');
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      fnv.text(it.key());
      if (!actual.contains(it.key())) {
        fnv.byte('M');
        continue;
      }
      digest_value(fnv, it.value(), actual[it.key()]);
    }
  } else if (expected.is_array()) {
    if (!actual.is_array()) return other();
    fnv.byte('A');
    fnv.u64(actual.size());
    // Extra entries are read like the expected list's last one.
    for (size_t i = 0; i < actual.size(); ++i)
      digest_value(fnv, expected.empty() ? json() : expected[std::min(i, expected.size() - 1)],
                   actual[i]);
  } else {
    fnv.byte('S');
    fnv.text(actual.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

}  // namespace

std::string row_digest(const float* data, size_t n) {
  Fnv fnv;
  fnv.floats(data, n);
  return fnv.hex();
}

std::string output_digest(const json& expected, const json& actual) {
  Fnv fnv;
  digest_value(fnv, expected, actual);
  return fnv.hex();
}

std::string exception_digest(const std::string& type) {
  Fnv fnv;
  fnv.byte('E');
  fnv.text(type);
  return fnv.hex();
}

std::vector<int64_t> spread_indices(int64_t row_size, int n) {
  std::vector<int64_t> out;
  if (row_size <= 0 || n <= 0) return out;
  if (n == 1 || row_size == 1) return {0};
  for (int i = 0; i < n; ++i) {
    int64_t idx = (row_size - 1) * i / (n - 1);
    if (out.empty() || out.back() != idx) out.push_back(idx);
  }
  return out;
}

json make_digest(const Tensor& t, const std::vector<int64_t>& sample_index, bool argmax) {
  const int64_t row_size = t.shape.empty() ? 1 : t.shape.back();
  const int64_t n_rows = row_size > 0 ? t.numel() / row_size : 0;
  json rows = json::array(), samples = json::array(), best = json::array();
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* row = t.data.data() + r * row_size;
    rows.push_back(row_digest(row, size_t(row_size)));
    json s = json::array();
    for (int64_t i : sample_index) s.push_back(exact_json_number(row[i]));
    samples.push_back(std::move(s));
    if (argmax) {
      int64_t b = 0;
      for (int64_t i = 1; i < row_size; ++i)
        if (row[i] > row[b]) b = i;
      best.push_back(b);
    }
  }
  json j = {{"digest", kDigestKind}, {"shape", t.shape}, {"axes", t.axes},
            {"row_size", row_size},  {"rows", rows},     {"sample_index", sample_index},
            {"samples", samples}};
  if (argmax) j["argmax"] = best;
  return j;
}

namespace {

[[noreturn]] void bad_digest(const std::string& problem) { throw TensorError("digest tensor: " + problem); }

const json& digest_field(const json& j, const char* name, bool array) {
  if (!j.contains(name) || (array && !j[name].is_array()))
    bad_digest(std::string("has no \"") + name + "\"" + (array ? " list" : ""));
  return j[name];
}

// Whole numbers in [lo, hi], or a message naming the field and the first bad entry.
std::vector<int64_t> int_list(const json& list, const char* name, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& x = list[i];
    const bool ok = x.is_number_integer() && (x.is_number_unsigned() ? x.get<uint64_t>() <= uint64_t(hi)
                                                                      : x.get<int64_t>() >= lo && x.get<int64_t>() <= hi);
    if (!ok)
      bad_digest(std::string("\"") + name + "\"[" + std::to_string(i) + "] is " + json_excerpt(x, 40) +
                 ", not a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(x.get<int64_t>());
  }
  return out;
}

bool is_hex_digest(const json& row) {
  if (!row.is_string() || row.get_ref<const std::string&>().size() != 16) return false;
  for (char c : row.get_ref<const std::string&>())
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

void read_digest_rows(const json& j, Digest& d) {
  const json& rows = digest_field(j, "rows", true);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!is_hex_digest(rows[r])) bad_digest("\"rows\"[" + std::to_string(r) + "] is not 16 hex digits");
    d.rows.push_back(rows[r].get<std::string>());
  }
  const json& samples = digest_field(j, "samples", true);
  if (samples.size() != d.rows.size()) bad_digest("\"samples\" and \"rows\" have different lengths");
  for (size_t r = 0; r < samples.size(); ++r) {
    if (!samples[r].is_array() || samples[r].size() != d.sample_index.size())
      bad_digest("\"samples\"[" + std::to_string(r) + "] does not hold one value per sample index");
    std::vector<float> row(samples[r].size());
    for (size_t i = 0; i < row.size(); ++i)
      if (!json_to_float(samples[r][i], row[i]))
        bad_digest("\"samples\"[" + std::to_string(r) + "][" + std::to_string(i) + "] is not a float32 value");
    d.samples.push_back(std::move(row));
  }
}

}  // namespace

Digest digest_from_json(const json& j) {
  if (!j.is_object()) bad_digest("must be a JSON object");
  if (digest_field(j, "digest", false) != kDigestKind)
    bad_digest("unknown kind " + json_excerpt(j["digest"], 40) + " (this grader reads \"" + kDigestKind + "\")");
  Digest d;
  d.shape = int_list(digest_field(j, "shape", true), "shape", 0, kMaxTensorElements);
  const int64_t numel = checked_numel(d.shape, kMaxTensorElements);
  if (d.shape.empty() || numel < 0) bad_digest("shape " + json_excerpt(j["shape"]) + " is empty or too large");
  if (j.contains("axes")) {
    const json& axes = j["axes"];
    if (!axes.is_array() || (!axes.empty() && axes.size() != d.shape.size()) ||
        !std::all_of(axes.begin(), axes.end(), [](const json& a) { return a.is_string(); }))
      bad_digest("\"axes\" must name each of its " + std::to_string(d.shape.size()) + " dimensions");
    for (const auto& a : axes) d.axes.push_back(a.get<std::string>());
  }
  const json& row_size = digest_field(j, "row_size", false);
  if (!row_size.is_number_integer() || row_size != d.shape.back())
    bad_digest("\"row_size\" is not the last dimension of its shape " + json_excerpt(j["shape"]));
  d.row_size = d.shape.back();
  d.sample_index = int_list(digest_field(j, "sample_index", true), "sample_index", 0, d.row_size - 1);
  read_digest_rows(j, d);
  const int64_t n_rows = d.row_size > 0 ? numel / d.row_size : 0;
  if (int64_t(d.rows.size()) != n_rows)
    bad_digest("shape " + json_excerpt(j["shape"]) + " has " + std::to_string(n_rows) + " rows but \"rows\" lists " +
               std::to_string(d.rows.size()));
  if (j.contains("argmax")) {
    if (!j["argmax"].is_array()) bad_digest("\"argmax\" must be a list");
    d.argmax = int_list(j["argmax"], "argmax", 0, std::max<int64_t>(0, d.row_size - 1));
    if (d.argmax.size() != d.rows.size()) bad_digest("\"argmax\" and \"rows\" have different lengths");
  }
  return d;
}

std::vector<bool> rows_matching(const Digest& expected, const Tensor& actual) {
  std::vector<bool> out(expected.rows.size(), false);
  if (actual.shape != expected.shape) return out;
  for (size_t r = 0; r < expected.rows.size(); ++r)
    out[r] = row_digest(actual.data.data() + r * size_t(expected.row_size),
                        size_t(expected.row_size)) == expected.rows[r];
  return out;
}

}  // namespace course
