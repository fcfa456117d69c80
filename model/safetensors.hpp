// Reading and writing the safetensors format (Hugging Face's model.safetensors).
//
// Layout of a file:
//   bytes [0, 8)          N, the header length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)      a JSON object: for each tensor
//                           "name": {"dtype": "F32", "shape": [768, 2304],
//                                    "data_offsets": [begin, end]}
//                         and optionally "__metadata__": {"key": "value", ...} (strings)
//   bytes [8 + N, end)    the data area; a tensor's bytes are [begin, end) of it,
//                         row-major, little-endian
//
// File::open maps the whole file read-only (mmap) and checks every header entry: that the
// offsets lie inside the data area and that end - begin equals the element count times
// the dtype's size; that no name or key appears twice; and, as the reference
// implementation requires, that the tensors' byte ranges tile the data area exactly (no
// overlap, no gap, nothing after the last). Every problem is a gpt2::ModelError whose message starts with the
// file's path and names the tensor and what is wrong; a bad file is never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpt2::safetensors {

struct TensorInfo {
  std::string name;   // exactly as in the file
  std::string dtype;  // "F32", "F16", "BF16", ... as in the file
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the data area
  uint64_t end = 0;
  const unsigned char* data = nullptr;  // first byte, inside the mapping

  int64_t numel() const;
};

class File {
 public:
  // Maps and checks a file; throws gpt2::ModelError. The file is opened without blocking
  // and must be a regular file (a FIFO or a directory is refused at once).
  static File open(const std::string& path);
  // The same checks on a whole file's bytes held in memory; `name` stands for the path in
  // messages (for tests and the fuzz target).
  static File from_bytes(std::string bytes, const std::string& name);

  const std::string& path() const;
  // In the order of the JSON header.
  const std::vector<TensorInfo>& tensors() const;
  // nullptr if there is no tensor of that exact name.
  const TensorInfo* find(const std::string& name) const;
  // The "__metadata__" entries (empty if the file has none).
  const std::map<std::string, std::string>& metadata() const;

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  struct Impl;  // opaque; public so that the reading steps in safetensors.cpp can fill it

 private:
  explicit File(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Bytes per element of a safetensors dtype name, 0 if the name is unknown.
size_t dtype_size(const std::string& dtype);

// IEEE half (F16) and bfloat16 (BF16) to float; exact, including subnormals, inf, NaN.
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);

// One tensor to write: F32 data, row-major, numel(shape) floats.
struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;
};

// Writes an F32 safetensors file, tensors in the given order, header padded with spaces to
// a multiple of 8 bytes (so every tensor's data is 8-byte aligned). Throws ModelError if
// the file cannot be written.
void write_f32(const std::string& path, const std::vector<F32Tensor>& tensors,
               const std::map<std::string, std::string>& metadata = {});

// "[768, 2304]": a shape as error messages print it.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace gpt2::safetensors
