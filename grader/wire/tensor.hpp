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

// The most elements a tensor read from JSON may hold (2^31: 8 GB of float32). GPT-2's
// largest output in the course, one step's logits, holds 50257.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 31;

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<std::string> axes;  // empty, or one name per dimension
  std::vector<float> data;        // row-major

  int64_t numel() const;  // -1 when a dimension is negative or the product overflows
};

// The product of `shape`, or -1 when a dimension is negative or the product is larger
// than `limit`. Never overflows.
int64_t checked_numel(const std::vector<int64_t>& shape, int64_t limit = INT64_MAX);

enum class TensorEncoding { numbers, base64 };

// Is this JSON value a tensor object (has "shape" and "dtype")?
bool is_tensor(const json& j);

// Throws TensorError naming the problem (bad dtype, negative dim, more than
// kMaxTensorElements elements, data length that disagrees with the shape, bad base64, a
// number outside float32's range, ...).
Tensor tensor_from_json(const json& j);

// The float a JSON number stands for. False when `j` is not a number or lies beyond
// float32's range (where the conversion would be undefined): 1e39, 1e300.
bool json_to_float(const json& j, float& out);

// A JSON value for a message, cut to about `max_chars` (containers are not walked deeper
// than their first entries): "[4294967296, 3]", "[1, 2, 3, ...]".
std::string json_excerpt(const json& j, size_t max_chars = 80);

// `numbers` falls back to base64 when the data holds NaN or infinity.
json tensor_to_json(const Tensor& t, TensorEncoding encoding);

// Rewrites every tensor inside `j` (at any depth) into `encoding`.
void reencode_tensors(json& j, TensorEncoding encoding);

using JsonVisitor = std::function<void(const std::string& path, const json& value)>;

// Visits, in document order, every value inside `j` for which `match` holds, with its JSON
// path ("caches[1].keys"), without looking inside it. Iterative: any depth is safe.
void for_each_matching(const json& j, const std::string& path,
                       const std::function<bool(const json&)>& match, const JsonVisitor& visit);

// for_each_matching with is_tensor.
void for_each_tensor(const json& j, const std::string& path, const JsonVisitor& visit);

// The JSON number that reads back as exactly `f` (f must be finite).
double exact_json_number(float f);

std::string base64_encode(const void* data, size_t n);
std::vector<uint8_t> base64_decode(const std::string& text);  // throws TensorError

// The hex of a float's bits, "0x3f800000".
std::string float_bits_hex(float f);

}  // namespace course
