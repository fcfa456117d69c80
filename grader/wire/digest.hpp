// Digest tensors: a compact, exact stand-in for a large float32 tensor in a fixture.
//
// Fixtures of the decode stages would be hundreds of MB if they held every logit and every
// cached key in full. Instead the expected output holds, for a tensor of shape
// [a, b, ..., row], one digest per row (a 64-bit FNV-1a hash of the row's float bits,
// so any change of any bit shows) plus a few sampled values per row, which let the report
// show expected against actual numbers where a row differs:
//
//   {"digest": "fnv1a64-rows", "shape": [3, 50257], "axes": ["step", "vocab"],
//    "row_size": 50257,                          floats per row: the last dimension
//    "rows": ["9ae16a3b2f90ee11", ...],          one hex digest per row, row-major
//    "sample_index": [0, 1570, ...],             indices within a row, the same for every row
//    "samples": [[-0.51, 0.02, ...], ...],       per row, the values at sample_index
//    "argmax": [464, 13, 318]}                   optional: per row, the index of the largest value
//
// The runner always sends the full tensor; only the fixture is compact. Zeros are hashed
// as +0 (the comparison treats -0 and +0 as equal), and every NaN as one canonical NaN,
// so a NaN never matches a finite expected value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire/tensor.hpp"

namespace course {

inline constexpr const char* kDigestKind = "fnv1a64-rows";

// Is this JSON value a digest tensor (has "digest" and "rows")?
bool is_digest(const json& j);

// FNV-1a 64 of the little-endian float bits of data[0 .. n-1], as 16 hex digits.
std::string row_digest(const float* data, size_t n);

// The digest form of `t`, one row per last-dimension slice; `sample_index` are indices
// within a row. With `argmax` the digest lists each row's first largest value's index.
json make_digest(const Tensor& t, const std::vector<int64_t>& sample_index, bool argmax);

// Sample indices spread evenly over a row of `row_size`: n of them, first 0, last row_size-1.
std::vector<int64_t> spread_indices(int64_t row_size, int n);

// A parsed digest tensor. Throws TensorError when malformed.
struct Digest {
  std::vector<int64_t> shape;
  std::vector<std::string> axes;
  int64_t row_size = 0;
  std::vector<std::string> rows;
  std::vector<int64_t> sample_index;
  std::vector<std::vector<float>> samples;  // [n_rows][sample_index.size()]
  std::vector<int64_t> argmax;              // empty, or [n_rows]
};
Digest digest_from_json(const json& j);

// Per row of `actual` (which must have the digest's shape): does its digest match?
std::vector<bool> rows_matching(const Digest& expected, const Tensor& actual);

// The digest of a whole output, as far as a fixture's expected output looks at it: one
// FNV-1a 64 over the keys `expected` holds (in its order) and, for each, `actual`'s value
// there: tensors by shape and float bits (expected may hold the tensor or its digest; -0
// hashed as +0, every NaN as one NaN, as in row_digest), lists by length and elements,
// numbers, strings and shape rows by their JSON text, and a marker for a key that is
// missing or a value of another kind. Keys only `actual` has are not looked at. Two outputs
// with the same digest are the same output as far as grading can tell. 16 hex digits.
std::string output_digest(const json& expected, const json& actual);

// The digest that stands for a case's outcome when the code threw instead of returning:
// one FNV-1a 64 over the exception's type name (the "what" is left out: it may hold
// addresses or sizes). Two mistakes that throw the same type on a case agree there.
std::string exception_digest(const std::string& type);

}  // namespace course
