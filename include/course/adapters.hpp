// The adapters: one function per kind of graded case. The grader's runner decodes a
// fixture's input, calls the adapter, and sends what it returns back to the grader. You
// write them in adapters/adapters.cpp (the reference has its own copy).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "course/chunked.hpp"
#include "course/decode.hpp"
#include "course/kvcache.hpp"
#include "course/paged.hpp"
#include "course/prefix_cache.hpp"
#include "course/quantized.hpp"
#include "course/speed.hpp"

namespace course {

// ---- Stage cache-structure ------------------------------------------------------------

// One step of a plan run on a list of caches (numbered in order of creation, from 0).
struct CacheOp {
  enum class Kind { create, append, clone, crop };  // crop: stage 6 (rollback)
  Kind kind = Kind::create;
  int cache = 0;         // append: the cache to append to; clone: the cache to copy; crop: the cache to crop
  std::vector<float> k;  // append only: [d_model] = [768]
  std::vector<float> v;  // append only: [d_model] = [768]
  int n = 0;             // crop only: how many positions to keep
};

// What the grader reads back from one cache.
struct CacheSnapshot {
  std::array<int, 3> shape{};  // [n_heads, length, head_dim] = [12, length, 64]
  std::vector<float> keys;     // [12, length, 64], read through KVCache::key(head, pos)
  std::vector<float> values;   // [12, length, 64], read through KVCache::value(head, pos)
};

// Runs the plan: `create` adds a new empty cache, `append` appends (k, v) to a cache,
// `clone` adds a new cache that is cache.clone(), `crop` (from stage 6 on) calls
// cache.crop(n). Returns one snapshot per cache, in order of creation, taken after the
// whole plan has run.
std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan);

// ---- Stage multi-layer-cache ----------------------------------------------------------

using ShapeRow = std::array<int, 3>;  // [n_heads, length, head_dim]

// A fresh ModelCache; for each entry of `appends`, one token (768 floats of K and of V,
// any values) appended to that layer. Returns 12 rows, layer 0 first: [12, length, 64].
std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends);

struct CloneShapes {
  std::vector<ShapeRow> original;  // [n_layers] rows
  std::vector<ShapeRow> clone;     // [n_layers] rows
};

// A fresh ModelCache gets `before` (layer indices, one append each); then
// copy = cache.clone(); then `after_original` is appended to the original and
// `after_clone` to the copy. Returns both caches' 12 shape rows.
CloneShapes run_model_cache_clone(const std::vector<int>& before,
                                  const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone);

// ---- Stages one-token, prefill, prefix-reuse -------------------------------------------
// The runner builds the model once (synthetic GPT-2 small weights named by the fixtures)
// and reads the caches you return through KVCache::length(), key() and value(). It also
// counts the rows each call puts through the model (gpt2::Model::work): a cache is there
// so that every position goes through each layer once.

// Logits and the cache they were computed with.
struct CacheRun {
  std::vector<float> logits;  // one-token: [n_steps, vocab], step by step;
                              // prefill: [n_chunks, vocab], each chunk's last row
  ModelCache cache;           // after the last step or chunk
};

// Stage one-token: a fresh ModelCache, then decode_step for each token in order.
CacheRun run_decode(const gpt2::Model& model, const std::vector<int>& tokens);

// Stage prefill: a fresh ModelCache, then one prefill per chunk of tokens, in order: the
// second chunk continues after the first one's positions, and so on.
CacheRun run_prefill(const gpt2::Model& model, const std::vector<std::vector<int>>& chunks);

struct ReuseRun {
  SavedPrefix saved;                              // after every suffix has run
  std::vector<SavedPrefix> continued;             // [n_suffixes]: continue_from's results, in order
  std::vector<std::vector<ShapeRow>> saved_rows;  // [n_suffixes][n_layers]: the saved cache's
                                                  // shape rows right after each suffix
};

// Stage prefix-reuse: save_prefix(prefix) once; then for each suffix in order,
// continue_from(saved, suffix), keeping its result and the saved cache's 12 shape rows.
ReuseRun run_prefix_reuse(const gpt2::Model& model, const std::vector<int>& prefix,
                          const std::vector<std::vector<int>>& suffixes);

// ---- Stage rollback ---------------------------------------------------------------------
// Stage 6 also grades run_cache_plan with `crop` steps.

// One round of speculative decoding, with the verdict given: a draft model proposed
// `draft`, the target model accepted its first `accepted` tokens (0 .. draft.size()) and
// then chose `next` itself.
struct SpecRound {
  std::vector<int> draft;
  int accepted = 0;
  int next = 0;
};

struct SpecRun {
  ModelCache prompt_cache;    // the prompt's cache: it must end exactly as prefill left it
  ModelCache cache;           // the speculating cache, after the last round
  std::vector<float> logits;  // [n_rounds, vocab]: the logits of each round's `next`
};

// Stage rollback: run.prompt_cache = prefill of `prompt` into a fresh ModelCache; then
// speculate on run.cache = a clone of it. For each round: n = the cache's length;
// decode_step every draft token; crop(n + accepted) (the rejected ones are forgotten);
// decode_step(next), appending its logits to run.logits.
SpecRun run_speculative(const gpt2::Model& model, const std::vector<int>& prompt,
                        const std::vector<SpecRound>& rounds);

// ---- Stage paged-cache ------------------------------------------------------------------

// One step of a plan run on one BlockPool and a list of sequences (numbered in order of
// creation, forks included, from 0).
struct PagedOp {
  enum class Kind { create, append, fork, release };
  Kind kind = Kind::create;
  int sequence = 0;      // append, fork, release: which sequence
  int n = 1;             // append only: how many positions, made room for by one grow(n)
  std::vector<float> k;  // append only: [n, d_model], row i written at the i-th new position
  std::vector<float> v;  // append only: [n, d_model]
};

struct PagedSnapshot {
  int length = 0;
  std::vector<int> block_table;  // [ceil(length / 16)]
  std::vector<float> keys;       // [12, length, 64] of layer 0, read through key(0, h, p)
  std::vector<float> values;     // [12, length, 64] of layer 0, read through value(0, h, p)
};

struct PagedPlanResult {
  std::vector<PagedSnapshot> sequences;  // [n_sequences], in order of creation
  std::vector<int> ref_counts;           // [n_blocks]: the pool's reference counts at the end
  int free_blocks = 0;                   // at the end
  std::vector<int> exhausted;            // indices of the steps that threw PoolExhausted
};

// Stage paged-cache: a BlockPool(n_blocks, 1 layer) and an empty list of sequences; then
// the plan: `create` adds an empty PagedSequence, `append` calls grow(n) once on a
// sequence and writes row i of (k, v) at its position length() - n + i (most appends have
// n = 1), `fork` adds sequence.fork(), `release` calls sequence.release(). A step that
// throws PoolExhausted is recorded in `exhausted` and the plan goes on. Snapshots and the
// pool's counts are taken after the whole plan.
PagedPlanResult run_paged_plan(int n_blocks, const std::vector<PagedOp>& plan);

// What a GPT-2 fork run leaves: the pool and every branch, still holding their blocks.
struct PagedForkRun {
  std::unique_ptr<BlockPool> pool;          // owns the blocks the branches live in
  std::vector<float> prompt_logits;         // [vocab]: the prompt's last position
  std::vector<PagedSequence> branches;      // [n_branches], after their tokens
  std::vector<std::vector<float>> logits;   // [n_branches][n_steps * vocab], step by step
};

// Stage paged-cache, on GPT-2: a BlockPool(n_blocks, 12 layers); paged_prefill of `prompt`
// into a new sequence (prompt_logits); for each branch, a fork() of the prompt's sequence
// and paged_decode_step of each of its tokens in order (logits kept); finally release()
// of the prompt's own sequence, so that only the branches hold blocks.
PagedForkRun run_paged_fork(const gpt2::Model& model, int n_blocks, const std::vector<int>& prompt,
                            const std::vector<std::vector<int>>& branches);

// ---- Stage prefix-cache -----------------------------------------------------------------

struct PrefixRun {
  std::vector<int> cached_tokens;          // [n_requests]: prompt tokens served from the cache
  std::vector<std::vector<float>> logits;  // [n_requests][vocab]: each prompt's last position
  std::vector<CachedBlock> entries;        // the cache after the last request (entries())
  std::vector<BlockKey> evicted;           // every evicted key, in order
  std::vector<int> ref_counts;             // [n_blocks], after the last request
  int free_blocks = 0;
};

// Stage prefix-cache: a BlockPool(n_blocks, 12 layers) and a PrefixCache on it; then each
// prompt in order, as one request that runs to its end before the next starts: what the
// cache holds of it is reused (cached_tokens: how many tokens), only the rest goes through
// the model (logits: of its last position), its full blocks are remembered, and the
// request lets its sequence go before the next one (make_room first makes the blocks
// the rest of the prompt needs free).
PrefixRun run_prefix_trace(const gpt2::Model& model, int n_blocks,
                           const std::vector<std::vector<int>>& prompts);

// Stage continuous-batching has no adapter of its own: the runner calls serve()
// (course/batching.hpp) directly.

// ---- Stage generate ---------------------------------------------------------------------

// A generation and the cache it ran in.
struct GenerateRun {
  Generated generated;  // tokens [n_new] and logits [n_new, vocab]
  ModelCache cache;     // after the last step: the prompt and every new token but the last
};

// Stage generate: a fresh ModelCache, then generate_greedy(model, cache, prompt,
// max_new_tokens, on_token), passing on_token through.
GenerateRun run_generate(const gpt2::Model& model, const std::vector<int>& prompt, int max_new_tokens,
                         const TokenSink& on_token);

struct ContinuedRun {
  SavedPrefix saved;                   // after every continuation: exactly as save_prefix left it
  std::vector<GenerateRun> continued;  // [n_suffixes]: each continuation, in order
};

// Stage generate, from a saved prefix: save_prefix(prefix) once; then for each suffix in
// order, generate_greedy of max_new_tokens tokens with the suffix as prompt, on a clone of
// the saved cache (so each continuation equals a fresh generation from prefix + suffix,
// and the prefix goes through the model once in all).
ContinuedRun run_generate_from(const gpt2::Model& model, const std::vector<int>& prefix,
                               const std::vector<std::vector<int>>& suffixes, int max_new_tokens);

// ---- Stage speed -------------------------------------------------------------------------

// Stage speed: a fresh ModelCache holding `past` made-up positions (fill_past(cache, past,
// past_seed)), then generate_greedy(model, cache, prompt, max_new_tokens) on it. The
// grader times this whole call.
GenerateRun run_speed(const gpt2::Model& model, int past, uint64_t past_seed,
                      const std::vector<int>& prompt, int max_new_tokens);

// ---- Stage quantized-kv ----------------------------------------------------------------

// Blocks quantized and read back.
struct Q8Blocks {
  std::vector<uint16_t> scales;    // [n_blocks]: each block's fp16 scale bits
  std::vector<int8_t> codes;       // [n_blocks * 32]: block b's codes at b*32 .. b*32+31
  std::vector<float> dequantized;  // [n_blocks * 32]: each block read back
};

// `values` (a multiple of 32 floats) cut into blocks of 32 in order; each block
// quantize_q8_0'd, and each block's dequantize_q8_0 read back.
Q8Blocks run_q8_blocks(const std::vector<float>& values);

// Logits and the quantized cache they were computed with.
struct Q8Run {
  std::vector<float> logits;  // [n_steps, vocab], step by step
  QuantizedModelCache cache;  // after the last step
};

// A fresh QuantizedModelCache, then decode_step_q8 for each token in order.
Q8Run run_q8_decode(const gpt2::Model& model, const std::vector<int>& tokens);

// ---- Stage chunked-prefill -------------------------------------------------------------

// serve_chunked over n_blocks blocks with `budget` rows a step: its result as it is.
ChunkedResult run_serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                                const std::vector<Request>& requests);

}  // namespace course
