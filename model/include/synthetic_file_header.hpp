// The first page of a synthetic weights file (synthetic_file.hpp): its layout, header-only,
// so that a program that only hands the file on without linking the model (the grader,
// which shares it read-only with its runners) checks it by the same definition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpt2::synthetic_file {

// Format 2: matrices as bfloat16 panels (format 1 held every value as a float).
inline constexpr char MAGIC[8] = {'K', 'V', 'C', 'S', 'Y', 'N', 'W', '2'};
inline constexpr size_t HEADER_BYTES = 4096;  // the weights start on a page

struct Header {
  char magic[8];
  uint64_t seed;
  int32_t config[6];  // n_layer, n_head, head_dim, d_model, n_ctx, vocab
  uint64_t bytes;     // the arena's bytes that follow the header
  uint64_t layout;    // a signature of the arena's layout and of the generator
  uint64_t digest;    // a digest of the arena's bytes
};

// Whether `first` (the file's first sizeof(Header) bytes) starts with this format's magic.
inline bool has_magic(const Header& first) {
  return std::memcmp(first.magic, MAGIC, sizeof MAGIC) == 0;
}

// The size of a file whose header says `header.bytes`.
inline uint64_t file_bytes(const Header& header) { return HEADER_BYTES + header.bytes; }

}  // namespace gpt2::synthetic_file
