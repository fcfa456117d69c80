#include "wire/tensor.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace course {

int64_t checked_numel(const std::vector<int64_t>& shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > limit) return -1;
  }
  return n;
}

int64_t Tensor::numel() const { return checked_numel(shape); }

bool is_tensor(const json& j) { return j.is_object() && j.contains("shape") && j.contains("dtype"); }

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t chunk = uint32_t(p[i]) << 16;
    if (i + 1 < n) chunk |= uint32_t(p[i + 1]) << 8;
    if (i + 2 < n) chunk |= uint32_t(p[i + 2]);
    out += kB64[(chunk >> 18) & 63];
    out += kB64[(chunk >> 12) & 63];
    out += i + 1 < n ? kB64[(chunk >> 6) & 63] : '=';
    out += i + 2 < n ? kB64[chunk & 63] : '=';
  }
  return out;
}

std::vector<uint8_t> base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) throw TensorError("base64 data length is not a multiple of 4");
  // Each character's value, -1 for one that is not base64: a lookup per character (the
  // grader decodes megabytes of answers per stage, grader/COST.md).
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t;
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[uint8_t(kB64[i])] = int8_t(i);
    return t;
  }();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  std::vector<uint8_t> out(n / 4 * 3);
  size_t o = 0;
  // Every group of four but the last has no padding: an '=' there is invalid.
  const size_t unpadded = n >= 4 ? n - 4 : 0;
  for (size_t i = 0; i < unpadded; i += 4) {
    const int a = table[s[i]], b = table[s[i + 1]], c = table[s[i + 2]], d = table[s[i + 3]];
    if ((a | b | c | d) < 0) throw TensorError("base64 data has an invalid character");
    const uint32_t chunk =
        (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | uint32_t(d);
    out[o++] = uint8_t(chunk >> 16);
    out[o++] = uint8_t(chunk >> 8);
    out[o++] = uint8_t(chunk);
  }
  if (n >= 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[unpadded + size_t(k)];
      if (c == '=' && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0) throw TensorError("base64 data has '=' before its end");
        v[k] = b64_value(c);
        if (v[k] < 0) throw TensorError("base64 data has an invalid character");
      }
    }
    const uint32_t chunk =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out[o++] = uint8_t(chunk >> 16);
    if (pad < 2) out[o++] = uint8_t(chunk >> 8);
    if (pad < 1) out[o++] = uint8_t(chunk);
  }
  out.resize(o);
  return out;
}

std::string float_bits_hex(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", bits);
  return buf;
}

double exact_json_number(float f) {
  // The shortest decimal for f, read as a double, usually converts back to f; when a
  // double rounding would land elsewhere, the double equal to f is used (longer, exact).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf - 1, f);
  *res.ptr = '\0';
  double d = std::strtod(buf, nullptr);
  float back = static_cast<float>(d);
  if (std::memcmp(&back, &f, 4) == 0) return d;
  return static_cast<double>(f);
}

bool json_to_float(const json& j, float& out) {
  if (!j.is_number()) return false;
  const double d = j.get<double>();
  // Below this magnitude a double rounds to a finite float (FLT_MAX at most); at it and
  // beyond, the conversion is undefined. (JSON has no NaN or infinity.)
  constexpr double kFloatLimit = 0x1.ffffffp+127;
  if (!(std::fabs(d) < kFloatLimit)) return false;
  out = static_cast<float>(d);
  return true;
}

std::string json_excerpt(const json& j, size_t max_chars) {
  std::string s;
  if (j.is_array() || j.is_object()) {
    s = j.is_array() ? "[" : "{";
    size_t i = 0;
    for (auto it = j.begin(); it != j.end() && s.size() <= max_chars; ++it, ++i) {
      s += i ? ", " : "";
      if (j.is_object()) s += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ": ";
      const json& v = it.value();
      s += v.is_array() ? (v.empty() ? "[]" : "[...]") : v.is_object() ? (v.empty() ? "{}" : "{...}")
                                                        : json_excerpt(v, max_chars);
    }
    s += i < j.size() ? ", ...]" : "]";
    if (j.is_object()) s.back() = '}';
  } else if (j.is_string() && j.get_ref<const std::string&>().size() > max_chars) {
    s = json(j.get_ref<const std::string&>().substr(0, max_chars)).dump(-1, ' ', false, json::error_handler_t::replace);
  } else {
    s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (s.size() > max_chars + 8) s = s.substr(0, max_chars) + "...";
  return s;
}

namespace {

std::vector<int64_t> tensor_shape(const json& j) {
  if (!j.contains("shape") || !j["shape"].is_array()) throw TensorError("tensor has no \"shape\" array");
  std::vector<int64_t> shape;
  for (const auto& d : j["shape"]) {
    if (!d.is_number_integer() || (d.is_number_unsigned() ? d.get<uint64_t>() > uint64_t(INT64_MAX)
                                                          : d.get<int64_t>() < 0))
      throw TensorError("tensor shape " + json_excerpt(j["shape"]) + " has an entry that is not a size");
    shape.push_back(d.get<int64_t>());
  }
  if (checked_numel(shape, kMaxTensorElements) < 0)
    throw TensorError("tensor shape " + json_excerpt(j["shape"]) + " holds more than " +
                      std::to_string(kMaxTensorElements) + " values");
  return shape;
}

// The number of bytes a base64 text decodes to (its length must be a multiple of 4).
size_t base64_decoded_size(const std::string& text) {
  size_t n = text.size() / 4 * 3;
  if (!text.empty() && text.back() == '=') --n;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --n;
  return n;
}

void read_base64_data(const json& j, int64_t n, Tensor& t) {
  if (!j["data_b64"].is_string()) throw TensorError("tensor \"data_b64\" must be a string");
  const std::string& text = j["data_b64"].get_ref<const std::string&>();
  if (text.size() % 4 != 0) throw TensorError("base64 data length is not a multiple of 4");
  // Checked before decoding: a shape of 1 value with megabytes of data is refused at once.
  const size_t n_bytes = base64_decoded_size(text);
  if (int64_t(n_bytes) != n * 4)
    throw TensorError("tensor shape " + json_excerpt(j["shape"]) + " holds " + std::to_string(n) +
                      " values but its data has " + std::to_string(n_bytes / 4) +
                      (n_bytes % 4 ? " and a fraction" : ""));
  std::vector<uint8_t> bytes = base64_decode(text);
  t.data.resize(size_t(n));
  if (n > 0) std::memcpy(t.data.data(), bytes.data(), bytes.size());
}

void read_number_data(const json& j, int64_t n, Tensor& t) {
  const json& data = j["data"];
  if (!data.is_array()) throw TensorError("tensor \"data\" must be an array of numbers");
  if (int64_t(data.size()) != n)
    throw TensorError("tensor shape " + json_excerpt(j["shape"]) + " holds " + std::to_string(n) +
                      " values but its data has " + std::to_string(data.size()));
  t.data.reserve(size_t(n));
  for (size_t i = 0; i < data.size(); ++i) {
    float f;
    if (!json_to_float(data[i], f))
      throw TensorError("tensor data[" + std::to_string(i) + "] is " + json_excerpt(data[i], 40) +
                        (data[i].is_number() ? ", outside float32's range" : ", not a number"));
    t.data.push_back(f);
  }
}

}  // namespace

Tensor tensor_from_json(const json& j) {
  if (!j.is_object()) throw TensorError("a tensor must be a JSON object");
  if (!j.contains("dtype") || j["dtype"] != "float32")
    throw TensorError("tensor dtype must be \"float32\"");
  Tensor t;
  t.shape = tensor_shape(j);
  if (j.contains("axes")) {
    const json& axes = j["axes"];
    if (!axes.is_array() || axes.size() != t.shape.size() ||
        !std::all_of(axes.begin(), axes.end(), [](const json& a) { return a.is_string(); }))
      throw TensorError("tensor \"axes\" must name each of its " + std::to_string(t.shape.size()) +
                        " dimensions");
    for (const auto& a : axes) t.axes.push_back(a.get<std::string>());
  }
  const int64_t n = t.numel();
  if (j.contains("data_b64")) {
    read_base64_data(j, n, t);
  } else if (j.contains("data")) {
    read_number_data(j, n, t);
  } else {
    throw TensorError("tensor has neither \"data\" nor \"data_b64\"");
  }
  return t;
}

json tensor_to_json(const Tensor& t, TensorEncoding encoding) {
  if (t.numel() != int64_t(t.data.size()))
    throw TensorError("tensor data length disagrees with its shape");
  json j;
  j["shape"] = t.shape;
  j["dtype"] = "float32";
  if (!t.axes.empty()) j["axes"] = t.axes;
  bool finite = true;
  for (float f : t.data) finite = finite && std::isfinite(f);
  if (encoding == TensorEncoding::numbers && finite) {
    json data = json::array();
    for (float f : t.data) data.push_back(exact_json_number(f));
    j["data"] = std::move(data);
  } else {
    j["data_b64"] = base64_encode(t.data.data(), t.data.size() * 4);
  }
  return j;
}

void for_each_matching(const json& j, const std::string& path, const std::function<bool(const json&)>& match,
                       const JsonVisitor& visit) {
  // Depth first, in document order, with an explicit stack: children are pushed in reverse.
  // A node's path is kept as one step and the index of its parent's entry in `steps`, and
  // spelled out only for a match, so a deep document costs time linear in its size (a
  // full path per node would be quadratic in the depth).
  struct Step {
    size_t parent;  // index in steps; npos for the root
    std::string text;  // "key", ".key" or "[i]"
  };
  constexpr size_t kRoot = std::string::npos;
  std::vector<Step> steps{{kRoot, path}};
  auto spell = [&steps](size_t at) {
    std::vector<const std::string*> parts;
    for (; at != kRoot; at = steps[at].parent) parts.push_back(&steps[at].text);
    std::string out;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += **it;
    return out;
  };
  std::vector<std::pair<const json*, size_t>> stack{{&j, 0}};
  std::vector<std::pair<const json*, size_t>> children;
  while (!stack.empty()) {
    auto [node, at] = stack.back();
    stack.pop_back();
    if (match(*node)) {
      visit(spell(at), *node);
      continue;
    }
    children.clear();
    const bool at_root = at == 0 && path.empty();
    if (node->is_object()) {
      for (auto it = node->begin(); it != node->end(); ++it)
        if (it.value().is_structured() || match(it.value())) {
          steps.push_back({at, at_root ? it.key() : "." + it.key()});
          children.emplace_back(&it.value(), steps.size() - 1);
        }
    } else if (node->is_array()) {
      for (size_t i = 0; i < node->size(); ++i)
        if ((*node)[i].is_structured() || match((*node)[i])) {
          steps.push_back({at, "[" + std::to_string(i) + "]"});
          children.emplace_back(&(*node)[i], steps.size() - 1);
        }
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
}

void for_each_tensor(const json& j, const std::string& path, const JsonVisitor& visit) {
  for_each_matching(j, path, is_tensor, visit);
}

void reencode_tensors(json& j, TensorEncoding encoding) {
  std::vector<json*> stack{&j};
  while (!stack.empty()) {
    json* node = stack.back();
    stack.pop_back();
    if (is_tensor(*node)) {
      *node = tensor_to_json(tensor_from_json(*node), encoding);
    } else if (node->is_structured()) {
      for (auto& child : *node) stack.push_back(&child);
    }
  }
}

}  // namespace course
