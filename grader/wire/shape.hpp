// GPT-2 small's shape as the grader's side uses it (the fixture checks, the case builders,
// the localizers): read from the model's own configuration (gpt2::Config, model/include/
// gpt2.hpp), so that there is one place these numbers are written. Only the header is
// used: nothing of the model is linked for it.
#pragma once

#include "gpt2.hpp"

namespace course::shape {

inline constexpr gpt2::Config kGpt2Small{};
inline constexpr int kLayers = kGpt2Small.n_layer;    // 12
inline constexpr int kHeads = kGpt2Small.n_head;      // 12
inline constexpr int kHeadDim = kGpt2Small.head_dim;  // 64
inline constexpr int kDModel = kGpt2Small.d_model;    // 768: floats in one token's key or value
inline constexpr int kVocab = kGpt2Small.vocab;       // 50257: token ids are 0 .. vocab - 1
inline constexpr int kContext = kGpt2Small.n_ctx;     // 1024: positions a sequence may hold
static_assert(kDModel == kHeads * kHeadDim);

}  // namespace course::shape
