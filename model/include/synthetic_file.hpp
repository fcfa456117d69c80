// Model::synthetic's weights kept in a file, so that a program that needs them often (the
// course's runners, one per stage) maps them instead of generating 124M values each time.
//
// The file holds the weights as the model stores them: a 4 KiB header (format, seed,
// config, a signature of the layout and the generator, a digest of the weights:
// synthetic_file_header.hpp), then the weights in the model's own layout (matrices as
// bfloat16 panels, wte transposed; the rest floats). Mapped, they are used in place: the
// same bits as Model::synthetic(seed, config).
#pragma once

#include <cstdint>
#include <string>

#include "gpt2.hpp"

namespace gpt2 {

// Writes synthetic(seed, config)'s weights to `path` (a temporary file renamed into
// place), then checks it with verify_synthetic_file.
void write_synthetic_file(const std::string& path, uint64_t seed,
                          const Config& config = gpt2_small());

// Reads every byte of the file against its digest, its header against (seed, config), and
// samples of every tensor against the generator.
void verify_synthetic_file(const std::string& path, uint64_t seed,
                           const Config& config = gpt2_small());

// The model on the file's weights, mapped read-only. Checks the header (format, seed,
// config, layout and generator), the size, and 33 elements of every tensor against the
// generator: a stale or cut file is refused, a flipped bit elsewhere is not seen (the
// digest is verify_synthetic_file's).
Model map_synthetic_file(const std::string& path, uint64_t seed,
                         const Config& config = gpt2_small());

// The same model with token `to`'s embedding row a copy of token `from`'s, as
// Model::with_token_row_copied makes it (the same bits), in a mapping of its own: only the
// pages of that row are copied, so a runner pays a few pages, not a second wte. Throws
// ModelError as map_synthetic_file does, and for a token id out of range.
Model map_synthetic_file_with_token_row_copied(const std::string& path, uint64_t seed, int from,
                                               int to, const Config& config = gpt2_small());

}  // namespace gpt2
