// Text generation with GPT-2: the model's own cached decode loop, a seeded sampler, and
// the generation loop that joins them. The course's learner writes the same cached loop
// in src/decode.cpp; `kvc generate --impl learner` runs theirs through the same
// generation loop (tools/kvc-learner/kvc_learner.cpp), so the two print the same tokens
// when the learner's logits have the reference's bits.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gpt2.hpp"

namespace gpt2 {

// ---- The cached decode loop ------------------------------------------------------------

// Keys and values of every position processed so far, per layer.
struct DecodeCache {
  int length = 0;    // positions cached; set it lower to forget the later ones
  int capacity = 0;  // positions the buffers hold
  std::vector<std::vector<float>> k, v;  // [n_layer] of [capacity, d_model]
};

// An empty cache for up to `capacity` positions (1 .. config.n_ctx).
DecodeCache make_decode_cache(const Model& model, int capacity);

// Runs `tokens` at positions cache.length .. cache.length + n - 1 through every layer,
// attending over the cached positions and themselves (causally), appends their keys and
// values, and writes the last token's logits: [vocab]. A prompt is one call (prefill);
// each generated token is one call with one token (decode step). Bit-identical to
// Model::forward's row for the same position (DETERMINISM.md). Throws ModelError for a bad
// token or when the cache is full, before any work.
void extend(const Model& model, DecodeCache& cache, std::span<const int> tokens, float* logits);

// ---- Sampling ------------------------------------------------------------------------------

struct SamplingOptions {
  float temperature = 0.0f;  // 0: greedy (the highest logit; the lowest id on a tie)
  int top_k = 0;             // keep the k most likely tokens (0: all)
  float top_p = 1.0f;        // keep the most likely tokens until their mass reaches p
  uint64_t seed = 0;
};

// Picks tokens from logits. Reproducible to the bit on any machine: its own PRNG
// (xoshiro256** seeded through splitmix64), gpt2::exp rather than libm's exp, and sums
// in a fixed order. With temperature T > 0, token i has weight exp((l_i - l_max) / T)
// (float, gpt2::exp; summed in double) over the kept tokens: the top_k best (by logit,
// then by lower id), then the shortest prefix of those in that order whose weights reach
// top_p of their total. One uniform number u in [0, 1) (53 random bits) per draw picks the
// first kept token whose running sum of weights exceeds u * total, in that best-first
// order (in id order when neither top_k nor top_p is used, which saves a sort).
class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);  // throws ModelError for bad options
  int next(std::span<const float> logits);
  // The PRNG's next value in [0, 1): 53 random bits.
  double uniform();

 private:
  SamplingOptions o_;
  uint64_t s_[4];
  std::vector<int> order_;      // [vocab] candidate ids, best first
  std::vector<double> weight_;  // [vocab] their weights
};

// The index of the largest value; the lowest index on a tie. NaN never wins.
int argmax(std::span<const float> values);

// ---- Generation ----------------------------------------------------------------------------

// How logits are made: prefill(prompt) returns the prompt's last logits, step(token)
// those of one more token. The reference (cached), no-cache and learner implementations
// each fill one in.
struct Decoder {
  std::function<std::vector<float>(std::span<const int> prompt)> prefill;
  std::function<std::vector<float>(int token)> step;
};

// The model's own cached loop (extend) and a loop without a cache (Model::forward over
// the whole sequence at every step, keeping the last row), for sequences up to
// `capacity` tokens.
Decoder cached_decoder(const Model& model, int capacity);
Decoder no_cache_decoder(const Model& model);
// The same for any no-cache forward (tokens -> [n, vocab], the logits of every position):
// a variant's (variants.hpp).
using Forward = std::function<std::vector<float>(std::span<const int> tokens)>;
Decoder no_cache_decoder(Forward forward, int vocab);

struct GenerationStats {
  int prompt_tokens = 0;
  int new_tokens = 0;
  int decode_steps = 0;  // new_tokens - 1 (the first comes from the prefill's logits)
  double prefill_s = 0;
  double decode_s = 0;   // the steps and the sampling between them
};

// Prefills `prompt` (not empty), then samples up to max_new_tokens tokens, calling
// on_token(id) for each as soon as it is chosen. Stops early after `stop_token` (>= 0)
// has been produced. A token's decode step runs only if another token is wanted.
GenerationStats generate(const Decoder& decoder, std::span<const int> prompt, int max_new_tokens,
                         Sampler& sampler, int stop_token,
                         const std::function<void(int)>& on_token);

}  // namespace gpt2
