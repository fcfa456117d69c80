#include "wire/digest.hpp"

#include <algorithm>
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

Digest digest_from_json(const json& j) {
  Digest d;
  try {
    if (j.at("digest").get<std::string>() != kDigestKind)
      throw TensorError("unknown digest kind " + j.at("digest").dump());
    d.shape = j.at("shape").get<std::vector<int64_t>>();
    if (j.contains("axes")) d.axes = j["axes"].get<std::vector<std::string>>();
    d.row_size = j.at("row_size").get<int64_t>();
    d.rows = j.at("rows").get<std::vector<std::string>>();
    d.sample_index = j.at("sample_index").get<std::vector<int64_t>>();
    for (const auto& s : j.at("samples")) d.samples.push_back(s.get<std::vector<float>>());
    if (j.contains("argmax")) d.argmax = j["argmax"].get<std::vector<int64_t>>();
  } catch (const json::exception& e) {
    throw TensorError(std::string("malformed digest tensor: ") + e.what());
  }
  int64_t numel = 1;
  for (int64_t s : d.shape) numel *= s;
  if (d.shape.empty() || d.row_size != d.shape.back() ||
      (d.row_size > 0 && int64_t(d.rows.size()) != numel / d.row_size) ||
      d.samples.size() != d.rows.size() || (!d.argmax.empty() && d.argmax.size() != d.rows.size()))
    throw TensorError("digest tensor: shape, rows, samples and argmax disagree");
  for (const auto& s : d.samples)
    if (s.size() != d.sample_index.size())
      throw TensorError("digest tensor: a row has the wrong number of samples");
  for (int64_t i : d.sample_index)
    if (i < 0 || i >= d.row_size) throw TensorError("digest tensor: sample index outside the row");
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
