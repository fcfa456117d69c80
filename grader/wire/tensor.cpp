#include "wire/tensor.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace course {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

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
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0) throw TensorError("base64 data has '=' before its end");
        v[k] = b64_value(c);
        if (v[k] < 0) throw TensorError("base64 data has an invalid character");
      }
    }
    uint32_t chunk = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out.push_back(uint8_t(chunk >> 16));
    if (pad < 2) out.push_back(uint8_t(chunk >> 8));
    if (pad < 1) out.push_back(uint8_t(chunk));
  }
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

Tensor tensor_from_json(const json& j) {
  if (!j.is_object()) throw TensorError("a tensor must be a JSON object");
  if (!j.contains("dtype") || j["dtype"] != "float32")
    throw TensorError("tensor dtype must be \"float32\"");
  if (!j.contains("shape") || !j["shape"].is_array())
    throw TensorError("tensor has no \"shape\" array");
  Tensor t;
  for (const auto& d : j["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw TensorError("tensor shape " + j["shape"].dump() + " has an entry that is not a size");
    t.shape.push_back(d.get<int64_t>());
  }
  if (j.contains("axes")) {
    if (!j["axes"].is_array() || j["axes"].size() != t.shape.size())
      throw TensorError("tensor \"axes\" must name each of its " + std::to_string(t.shape.size()) +
                        " dimensions");
    for (const auto& a : j["axes"]) t.axes.push_back(a.get<std::string>());
  }
  const int64_t n = t.numel();
  if (n > (int64_t(1) << 31)) throw TensorError("tensor shape " + j["shape"].dump() + " is too large");
  if (j.contains("data_b64")) {
    if (!j["data_b64"].is_string()) throw TensorError("tensor \"data_b64\" must be a string");
    std::vector<uint8_t> bytes = base64_decode(j["data_b64"].get<std::string>());
    if (int64_t(bytes.size()) != n * 4)
      throw TensorError("tensor shape " + j["shape"].dump() + " holds " + std::to_string(n) +
                        " values but its data has " + std::to_string(bytes.size() / 4));
    t.data.resize(size_t(n));
    if (n > 0) std::memcpy(t.data.data(), bytes.data(), bytes.size());
  } else if (j.contains("data")) {
    const json& data = j["data"];
    if (!data.is_array()) throw TensorError("tensor \"data\" must be an array of numbers");
    if (int64_t(data.size()) != n)
      throw TensorError("tensor shape " + j["shape"].dump() + " holds " + std::to_string(n) +
                        " values but its data has " + std::to_string(data.size()));
    t.data.reserve(size_t(n));
    for (const auto& x : data) {
      if (!x.is_number()) throw TensorError("tensor data holds a value that is not a number");
      t.data.push_back(static_cast<float>(x.get<double>()));
    }
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

void for_each_tensor(const json& j, const std::string& path,
                     const std::function<void(const std::string&, const json&)>& visit) {
  if (is_tensor(j)) {
    visit(path, j);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      for_each_tensor(it.value(), path.empty() ? it.key() : path + "." + it.key(), visit);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) for_each_tensor(j[i], path + "[" + std::to_string(i) + "]", visit);
  }
}

void reencode_tensors(json& j, TensorEncoding encoding) {
  if (is_tensor(j)) {
    j = tensor_to_json(tensor_from_json(j), encoding);
  } else if (j.is_object() || j.is_array()) {
    for (auto& child : j) reencode_tensors(child, encoding);
  }
}

}  // namespace course
