// Your decode loop: stages 3 (one-token), 4 (prefill), 5 (prefix-reuse) and 10 (generate).
//
// The declarations, with the exact contract of each function, are in
// include/course/decode.hpp; read them first. This file puts your KV cache (stages 1-2)
// to work in GPT-2 small. The model (model/include/gpt2.hpp) already does every step that
// works on rows: the embedding, each layer's q, k and v, the rest of each block after
// attention, the logits (model/include/gpt2.hpp says what each takes and returns). What you
// write is the part that needs the cache: which position each row is, what goes into each
// layer's cache and when, and each row's attention over what that layer holds.
//
// Attention is built from gpt2::dot, gpt2::softmax and gpt2::weighted_sum (model/include/ops.hpp),
// scaled by gpt2::attention_scale(64) = 0.125f. model/DETERMINISM.md spells out the loop
// that gives the reference's numbers bit for bit. Another summation order gives numbers
// that are close but not equal, and so does std::exp (glibc's exp rounds differently from
// gpt2::exp on about 1 input in 11,500); the grader compares at atol = 0. Scaling by a
// power of two is exact: dividing by 8.0f, or scaling q first, changes no bit.
//
// Stage 10 closes the loop: generate_greedy chooses each next token itself (the largest
// logit, course::greedy) and feeds it back. Sampling at a temperature and batching several
// sequences are left out: one sequence, greedy.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/decode.hpp"

#include "course/not_implemented.hpp"
#include "ops.hpp"

namespace course {

void attend_one(std::span<const float> q, const KVView& cache, std::span<float> out) {
  // q:      [d_model]                 head h in q[h*64 .. h*64+63]
  // cache:  [n_heads, seq, head_dim]  read through cache.key(h, j) / cache.value(h, j)
  // out:    [d_model]                 head h in out[h*64 .. h*64+63]
  // scores: [seq]                     one head's scores, then its softmax weights
  // TODO: attention of one query over every cached position (no mask), head by head, with
  // the specified operations (model/DETERMINISM.md): the bits must be the reference's.
  (void)q;
  (void)cache;
  (void)out;
  not_implemented("attend_one (src/decode.cpp)");
}

std::vector<float> decode_step(const gpt2::Model& model, ModelCache& cache, int token) {
  // x:       [1, d_model]  the token's residual stream
  // q, k, v: [1, d_model]  this layer's projections of x
  // attn:    [1, d_model]  attend_one's output
  // logits:  [vocab]
  // TODO: one token through every layer at the position after the cached ones; each layer
  // gains this token's key and value, attended over with the rest; the new position's logits.
  (void)model;
  (void)cache;
  (void)token;
  not_implemented("decode_step (src/decode.cpp)");
}

void attend_causal(std::span<const float> q, int n_rows, const KVView& cache,
                   std::span<float> out) {
  // q:      [n_rows, d_model]         row r is position p = cache.length() - n_rows + r
  // cache:  [n_heads, seq, head_dim]  already holds every row's k and v
  // out:    [n_rows, d_model]
  // scores: [seq] or [p + 1]          one row's, one head's scores
  // TODO: the query rows are the cache's last n_rows positions; each attends over the
  // positions up to and including its own, and never a later one.
  (void)q;
  (void)n_rows;
  (void)cache;
  (void)out;
  not_implemented("attend_causal (src/decode.cpp)");
}

std::vector<float> prefill(const gpt2::Model& model, ModelCache& cache,
                           std::span<const int> tokens) {
  // positions: [n]           past + i, past = the cache's length before the call
  // x:         [n, d_model]  residual stream, one row per token
  // q, k, v:   [n, d_model]  each
  // attn:      [n, d_model]  attend_causal's output
  // logits:    [vocab]       of the last row only
  // TODO: the tokens as one batch at the positions after the cached ones, each row seeing only
  // itself and earlier positions; every layer gains all rows; the last row's logits.
  (void)model;
  (void)cache;
  (void)tokens;
  not_implemented("prefill (src/decode.cpp)");
}

SavedPrefix save_prefix(const gpt2::Model& model, std::span<const int> prefix) {
  // saved.cache:  n_layers x [12, n_prefix, 64]
  // saved.logits: [vocab]
  // TODO: a new SavedPrefix holding the prefix's cache and the logits of its last position.
  (void)model;
  (void)prefix;
  not_implemented("save_prefix (src/decode.cpp)");
}

SavedPrefix continue_from(const gpt2::Model& model, const SavedPrefix& saved,
                          std::span<const int> suffix) {
  // longer.cache:  n_layers x [12, n_prefix + n_suffix, 64]
  // longer.logits: [vocab]
  // TODO: the cache and logits of prefix + suffix, reusing the saved prefix's positions;
  // `saved` stays exactly as it was and shares nothing with the result.
  (void)model;
  (void)saved;
  (void)suffix;
  not_implemented("continue_from (src/decode.cpp)");
}

Generated generate_greedy(const gpt2::Model& model, ModelCache& cache, std::span<const int> prompt,
                          int max_new_tokens, const TokenSink& on_token) {
  // logits:         [vocab]                the latest logits (the prefill's, then each step's)
  // out.tokens:     [max_new_tokens]       greedy(logits) each time
  // out.logits:     [max_new_tokens, vocab] row i = the logits out.tokens[i] was chosen from
  // TODO: max_new_tokens greedy tokens after the prompt (continuing whatever the cache
  // holds), each with the logits it came from, each passed to on_token when it is set; the
  // last token is never fed back.
  (void)model;
  (void)cache;
  (void)prompt;
  (void)max_new_tokens;
  (void)on_token;
  not_implemented("generate_greedy (src/decode.cpp)");
}

}  // namespace course
