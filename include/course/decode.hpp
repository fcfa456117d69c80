// Stages 3-5 and 10: the KV cache at work in GPT-2 small. Decode one token (stage
// one-token), prefill a prompt (stage prefill), continue from a saved prefix (stage
// prefix-reuse), and generate text greedily with all of it (stage generate).
// Both your code (src/decode.cpp) and the reference implement this header; the grader's
// runner is compiled against it, so leave it as it is.
//
// The model (model/include/gpt2.hpp) does everything that works on one row at a time:
// embedding, the q/k/v projection, the rest of a block after attention, the logits. What
// you write is the part that needs the cache: appending each layer's k and v, and attention
// over the cached positions. model/include/ops.hpp gives the three pieces attention is made
// of (dot, softmax, weighted_sum) and model/DETERMINISM.md the exact loop that makes your
// numbers equal the reference's bit for bit.
//
// Shapes (one row = one token): q, k, v, attention outputs and the residual stream are
// [n_rows, d_model] = [n_rows, 768]; head h of a row is its 64 floats h*64 .. h*64+63.
// Logits are [vocab] = [50257] floats for one position.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "course/kvcache.hpp"
#include "gpt2.hpp"

namespace course {

// ---- Stage one-token ------------------------------------------------------------------

// Attention of one query row over every position of one layer's cache, with no mask:
// for each head h,
//   scores[j] = gpt2::dot(q_h, cache.key(h, j), 64) * gpt2::attention_scale(64)
//               for j = 0 .. cache.length()-1
//   gpt2::softmax(scores, cache.length())
//   out_h = gpt2::weighted_sum over the value rows cache.value(h, j)
// q: [d_model] (head h in q[h*64 .. h*64+63]); out: [d_model], head h likewise.
// The cache must hold at least one position. Every float of out is written; what out held
// before is not read (the grader hands it a buffer of NaNs).
void attend_one(std::span<const float> q, const KVView& cache, std::span<float> out);

// One decode step: `token` goes in at position p = cache.layer(0).length() (the length
// before this step). For every layer: the token's q, k, v (model.qkv), append k and v to
// that layer (exactly one position), attend_one over that layer's cache (which now ends
// with the token itself), model.finish_block. Returns model.logits of the token: [vocab].
std::vector<float> decode_step(const gpt2::Model& model, ModelCache& cache, int token);

// ---- Stage prefill --------------------------------------------------------------------

// Causal attention of the last n_rows positions of one layer's cache: query row r is
// position p = cache.length() - n_rows + r (its k and v are already in the cache) and
// attends to positions 0 .. p only; later positions are masked out. Each row's numbers
// equal attend_one's for the same query over a cache that ends at p.
// q: [n_rows, d_model]; out: [n_rows, d_model], every float written, none read.
void attend_causal(std::span<const float> q, int n_rows, const KVView& cache,
                   std::span<float> out);

// The whole prompt at once, layer by layer on a batch of rows. Rows continue after what
// the cache already holds: row i is position cache.layer(0).length() + i (0 + i for an
// empty cache). For every layer: q, k, v of all rows, append each row's k and v in order,
// attend_causal, finish_block. Returns the logits of the last row only: [vocab].
// `tokens` must not be empty.
std::vector<float> prefill(const gpt2::Model& model, ModelCache& cache,
                           std::span<const int> tokens);

// ---- Stage prefix-reuse ---------------------------------------------------------------

// A prompt prefix computed once: its cache and the logits of its last position.
struct SavedPrefix {
  ModelCache cache;           // n_layers layers of [12, n_prefix, 64]
  std::vector<float> logits;  // [vocab]
};

// Prefill `prefix` into a new cache and keep it.
SavedPrefix save_prefix(const gpt2::Model& model, std::span<const int> prefix);

// Continues a saved prefix with `suffix` (not empty): the suffix is computed on top of a
// copy of the saved cache, its positions following the prefix's. Returns the longer
// prefix (prefix + suffix: its cache and the logits of its last position, equal to those
// of a fresh prefill of prefix + suffix), which could itself be saved and continued.
// `saved` must be exactly as it was before the call when the call returns: reusing a
// prefix never changes it.
SavedPrefix continue_from(const gpt2::Model& model, const SavedPrefix& saved,
                          std::span<const int> suffix);

// ---- Stage generate ---------------------------------------------------------------------

// The index of the largest value; the lowest such index on a tie. Greedy sampling. Given.
inline int greedy(std::span<const float> logits) {
  int best = 0;
  for (int i = 1; i < int(logits.size()); ++i)
    if (logits[size_t(i)] > logits[size_t(best)]) best = i;
  return best;
}

// What a greedy generation made.
struct Generated {
  std::vector<int> tokens;    // [n_new]: the chosen tokens, in order
  std::vector<float> logits;  // [n_new, vocab]: row i holds the logits tokens[i] was chosen from
};

// Called with each new token as soon as it is chosen (kvc generate prints it then).
using TokenSink = std::function<void(int token)>;

// Greedy generation with the cache, after what `cache` already holds (empty: a fresh
// prompt; a clone of a saved prefix: a continuation). Token 0 is greedy of the logits of
// the prompt's last position; token i (i >= 1) is greedy of the logits of the position
// that holds token i - 1. on_token (when set) is called with each token right after it is
// chosen, in order. The last token is never fed back: the cache ends with
// prompt.size() + max_new_tokens - 1 more positions, each of which went through every
// layer once. course::greedy settles a tie by the lowest id. `prompt` must not be empty
// and max_new_tokens must be at least 1.
//
Generated generate_greedy(const gpt2::Model& model, ModelCache& cache, std::span<const int> prompt,
                          int max_new_tokens, const TokenSink& on_token = {});

}  // namespace course
