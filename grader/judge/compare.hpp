// Comparing a runner's output with a fixture's expected output, exactly: integers and
// shapes must be equal, tensors equal value for value (atol = 0; NaN never equals).
#pragma once

#include <string>
#include <vector>

#include "wire/digest.hpp"
#include "wire/tensor.hpp"

namespace course {

struct Mismatch {
  std::string path;     // where in the output: "caches[1].keys", "rows"
  std::string summary;  // one line
  std::string detail;   // further lines (already indented by the report)
  json data;            // the same, structured, for --format json
  int rank = 2;         // what it explains, most first (compare_outputs sorts by it): 0 a count,
                        // length, table or list size; 1 a tensor's shape; 2 a tensor's values;
                        // 3 anything else (a hex key, a float)
};

// Everything in `expected` must be in `actual` and equal; keys only in `actual` are
// ignored. Returns one Mismatch per differing leaf (a tensor, a list of shape rows, a
// number, ...): those that explain most first (counts, lengths, tables and list sizes,
// then tensor shapes, tensor values, the rest), in document order within each rank.
std::vector<Mismatch> compare_outputs(const json& expected, const json& actual);

// The parts, for unit tests and for stage-specific checks.
std::vector<Mismatch> compare_tensors(const std::string& path, const Tensor& expected, const Tensor& actual);
// A full tensor against a digest tensor from a fixture (digest.hpp): rows whose digest
// differs, the first one's sampled values marked right or wrong, and its argmax.
std::vector<Mismatch> compare_digest(const std::string& path, const Digest& expected, const Tensor& actual);
std::vector<Mismatch> compare_shape_rows(const std::string& path, const json& expected, const json& actual);

// "head 3, pos 1, dim 17" for a flat index into a tensor (axes named "d0", "d1"... when
// the tensor names none).
std::string coordinates(const Tensor& t, int64_t flat_index);
// A float for a report: shortest decimal, plus its bits when `other` differs but prints alike.
std::string format_float(float f, float other);
// A short, one-line rendering of a JSON value: tensors as <float32 [12, 3, 64]>.
std::string short_json(const json& j, size_t max_chars = 160);

}  // namespace course
