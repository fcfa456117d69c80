// Your decode loop: stages 3 (one-token), 4 (prefill), 5 (prefix-reuse) and 10 (generate).
//
// The declarations, with the exact contract of each function, are in
// include/course/decode.hpp; read them first. This file puts your KV cache (stages 1-2)
// to work in GPT-2 small. The model (model/include/gpt2.hpp) already does every step that
// works on one row at a time; what you write is the part that needs the cache:
//
//   x = model.embed(token, position)            // [n_rows, d_model] residual stream
//   for each layer l:
//     q, k, v = model.qkv(l, x)                 // [n_rows, d_model] each
//     append k and v to cache.layer(l)          // one position per row
//     attn = attention of q over cache.layer(l) // [n_rows, d_model]
//     model.finish_block(l, attn, x)            // x changes in place
//   logits = model.logits(x of the last row)    // [vocab]
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
  // TODO: for each head: scores[j] = gpt2::dot(q_h, key(h, j), 64) * scale for every cached
  // j, gpt2::softmax(scores, seq), then out_h = gpt2::weighted_sum of the value rows.
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
  // TODO: position = cache length before the step; embed; per layer qkv, append (k, v) to
  // that layer, attend_one, finish_block; return the logits.
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
  // TODO: for each row r and head h, attention over positions 0 .. p only (mask the later
  // ones with -INFINITY, or leave them out: gpt2::exp(-inf) == 0 gives the same bits).
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
  // TODO: embed all rows; per layer qkv of all rows, append every row's (k, v) in order,
  // attend_causal, finish_block; return the logits of the last row.
  (void)model;
  (void)cache;
  (void)tokens;
  not_implemented("prefill (src/decode.cpp)");
}

SavedPrefix save_prefix(const gpt2::Model& model, std::span<const int> prefix) {
  // saved.cache:  n_layers x [12, n_prefix, 64]
  // saved.logits: [vocab]
  // TODO: prefill the prefix into a new SavedPrefix's cache and keep its logits.
  (void)model;
  (void)prefix;
  not_implemented("save_prefix (src/decode.cpp)");
}

SavedPrefix continue_from(const gpt2::Model& model, const SavedPrefix& saved,
                          std::span<const int> suffix) {
  // longer.cache:  n_layers x [12, n_prefix + n_suffix, 64]
  // longer.logits: [vocab]
  // TODO: start from a deep copy of saved.cache (ModelCache::clone, not a plain copy,
  // which would share the layers) and prefill the suffix on top of it.
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
  // TODO: prefill the prompt; then max_new_tokens times: token = greedy(logits), keep it and
  // its logits, on_token(token) when on_token is set, and, unless it is the last one,
  // logits = decode_step(model, cache, token).
  (void)model;
  (void)cache;
  (void)prompt;
  (void)max_new_tokens;
  (void)on_token;
  not_implemented("generate_greedy (src/decode.cpp)");
}

}  // namespace course
