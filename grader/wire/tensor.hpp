// Tensors as they travel in fixtures and between the runner and the grader.
//
// JSON form:
//   {"shape": [12, 3, 64], "dtype": "float32", "axes": ["head", "pos", "dim"],
//    "data": [0.5, 1.25, ...]}                 numbers, or
//    "data_b64": "AAAAPw..."                   little-endian float32 bits in base64
// Both forms round-trip float32 exactly (bit for bit). Numbers are written as the
// shortest decimal that reads back as the same float; non-finite values exist only in
// the base64 form. "axes" names each dimension for mismatch reports and is optional.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace course {

using json = nlohmann::json;

struct TensorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<std::string> axes;  // empty, or one name per dimension
  std::vector<float> data;        // row-major

  int64_t numel() const;
};

enum class TensorEncoding { numbers, base64 };

// Is this JSON value a tensor object (has "shape" and "dtype")?
bool is_tensor(const json& j);

// Throws TensorError naming the problem (bad dtype, negative dim, data length that
// disagrees with the shape, bad base64, ...).
Tensor tensor_from_json(const json& j);

// `numbers` falls back to base64 when the data holds NaN or infinity.
json tensor_to_json(const Tensor& t, TensorEncoding encoding);

// Rewrites every tensor inside `j` (at any depth) into `encoding`.
void reencode_tensors(json& j, TensorEncoding encoding);

// Visits every tensor inside `j` with its JSON path ("caches[1].keys").
void for_each_tensor(const json& j, const std::string& path,
                     const std::function<void(const std::string&, const json&)>& visit);

// The JSON number that reads back as exactly `f` (f must be finite).
double exact_json_number(float f);

std::string base64_encode(const void* data, size_t n);
std::vector<uint8_t> base64_decode(const std::string& text);  // throws TensorError

// The hex of a float's bits, "0x3f800000".
std::string float_bits_hex(float f);

}  // namespace course
