// The model's own cached loops for the variants of GPT-2 small (grouped_query.hpp,
// rotary.hpp, latent.hpp), as generate.hpp's Decoder: a prompt at once, then one token at
// a time. Each is written with the variant's public pieces and ops.hpp only, the loop a
// learner writes for the variant's stage, so the model's tests that compare these with
// each variant's forward() also prove that the public API composes to the ground truth.
// Used by `kvc digest --decode`, `kvc generate --variant` and `kvc bench-variants`.
// Not for a runner: the library's own header (gpt2_internals).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "generate.hpp"
#include "gpt2.hpp"

namespace gpt2 {

// Which model: GPT-2 itself, or one of its variants on the same weights.
struct Variant {
  enum class Kind { gpt2, grouped_query, rotary, streaming, latent };
  Kind kind = Kind::gpt2;
  int n_kv_heads = 12;       // grouped_query
  int sink = 4, window = 8;  // streaming (RotaryModel::forward_streaming)
  uint64_t seed = 1;         // latent: the up-projections' seed

  // "gpt2", "gqa-4" (any K/V head count), "rotary", "streaming-4-8" (sink, window),
  // "latent"; throws ModelError naming the accepted forms otherwise. seed: the latent
  // variant's up-projections (kvc passes the synthetic weights' seed).
  static Variant parse(const std::string& name, uint64_t seed);
  std::string name() const;
};

// The variant's forward() on `base` (which must outlive it): tokens -> the logits of
// every position, [tokens.size(), vocab]. The variant's model is made once, here.
Forward variant_forward(const Model& base, const Variant& variant);

// generate.hpp's no_cache_decoder for a variant: its forward over the whole sequence at
// every step.
Decoder variant_no_cache_decoder(const Model& base, const Variant& variant);

// The variant's cached loop for up to `capacity` positions (1 .. n_ctx): GPT-2's is
// cached_decoder; grouped_query caches [n_kv_heads, seq, 64] per layer, rotary its keys
// after rotation, latent one [c ; k_rope] row of 192 floats per position. The streaming
// variant has no decoder here (its forward is already one token at a time); asking for
// one throws ModelError. The decoder keeps what it needs of `base`, which must outlive it.
Decoder variant_decoder(const Model& base, const Variant& variant, int capacity);

}  // namespace gpt2
