// Your adapters: the glue between the grader's fixtures and your cache. The runner turns a
// fixture's input into the arguments below, calls the function, and sends what it returns
// to the grader. The declarations, with the exact contract, are in
// include/course/adapters.hpp.
//
// Each function throws "not implemented yet" until you replace its body.
#include "course/adapters.hpp"

#include "course/not_implemented.hpp"

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  // TODO: run the plan on KVCaches (from stage 6 on, `crop` steps too), then one snapshot per
  // cache, in [12, seq, 64] order: head outermost, then position, then dim.
  (void)plan;
  not_implemented("run_cache_plan (adapters/adapters.cpp)");
}

std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends) {
  // TODO: a fresh ModelCache, one append to layer l per entry l of `appends`, then one
  // row {12, length, 64} per layer, layer 0 first.
  (void)appends;
  not_implemented("run_model_cache_shapes (adapters/adapters.cpp)");
}

CloneShapes run_model_cache_clone(const std::vector<int>& before, const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone) {
  // TODO: `before` on a fresh ModelCache, a clone, then `after_original` on the
  // original and `after_clone` on the clone; the shape rows of both.
  (void)before;
  (void)after_original;
  (void)after_clone;
  not_implemented("run_model_cache_clone (adapters/adapters.cpp)");
}

CacheRun run_decode(const gpt2::Model& model, const std::vector<int>& tokens) {
  // run.logits: [n_steps, vocab], step 0 first
  // TODO: a fresh CacheRun in which the tokens are decoded one step each, in order, and every
  // step's logits kept.
  (void)model;
  (void)tokens;
  not_implemented("run_decode (adapters/adapters.cpp)");
}

CacheRun run_prefill(const gpt2::Model& model, const std::vector<std::vector<int>>& chunks) {
  // run.logits: [n_chunks, vocab], chunk 0 first
  // TODO: a fresh CacheRun in which each chunk is one prefill, in order, and every chunk's
  // logits kept.
  (void)model;
  (void)chunks;
  not_implemented("run_prefill (adapters/adapters.cpp)");
}

ReuseRun run_prefix_reuse(const gpt2::Model& model, const std::vector<int>& prefix,
                          const std::vector<std::vector<int>>& suffixes) {
  // run.continued: [n_suffixes]; run.saved_rows: [n_suffixes][n_layers] rows {12, length, 64}
  // TODO: the prefix saved once; every suffix continued from the saved prefix, with the
  // saved cache's 12 shape rows recorded after each.
  (void)model;
  (void)prefix;
  (void)suffixes;
  not_implemented("run_prefix_reuse (adapters/adapters.cpp)");
}

SpecRun run_speculative(const gpt2::Model& model, const std::vector<int>& prompt,
                        const std::vector<SpecRound>& rounds) {
  // run.logits: [n_rounds, vocab], one row per round's `next`
  // TODO: the prompt's cache in run.prompt_cache, left as the prefill made it; the rounds
  // on a copy in run.cache: drafts decoded, rolled back to the accepted ones, `next` decoded
  // and its logits kept.
  (void)model;
  (void)prompt;
  (void)rounds;
  not_implemented("run_speculative (adapters/adapters.cpp)");
}

PagedPlanResult run_paged_plan(int n_blocks, const std::vector<PagedOp>& plan) {
  // result.sequences: [n_sequences]; each snapshot's keys/values: [12, length, 64] of layer 0
  // TODO: the plan on a one-layer pool of n_blocks (an append is op.n positions more, made
  // room for by one grow, holding op.k's and op.v's rows); the index of every step that
  // throws PoolExhausted in `exhausted`; then every sequence's snapshot (layer 0,
  // [12, length, 64]) and the pool's counts.
  (void)n_blocks;
  (void)plan;
  not_implemented("run_paged_plan (adapters/adapters.cpp)");
}

PagedForkRun run_paged_fork(const gpt2::Model& model, int n_blocks, const std::vector<int>& prompt,
                            const std::vector<std::vector<int>>& branches) {
  // run.logits: [n_branches][n_steps * vocab]
  // TODO: the prompt prefilled into a root sequence on run.pool (n_blocks, 12 layers); per
  // branch a fork of the root, its tokens decoded and their logits kept; the root released.
  (void)model;
  (void)n_blocks;
  (void)prompt;
  (void)branches;
  not_implemented("run_paged_fork (adapters/adapters.cpp)");
}

PrefixRun run_prefix_trace(const gpt2::Model& model, int n_blocks,
                           const std::vector<std::vector<int>>& prompts) {
  // run.logits: [n_requests][vocab]; run.ref_counts: [n_blocks]
  // TODO: each prompt served through a PrefixCache on a pool of n_blocks, computing only
  // what the cache does not hold; its logits and cached length; at the end the entries,
  // the evicted keys and the pool's counts.
  (void)model;
  (void)n_blocks;
  (void)prompts;
  not_implemented("run_prefix_trace (adapters/adapters.cpp)");
}

GenerateRun run_generate(const gpt2::Model& model, const std::vector<int>& prompt, int max_new_tokens,
                         const TokenSink& on_token) {
  // run.generated.logits: [max_new_tokens, vocab]
  // TODO: a fresh GenerateRun: generate_greedy of the prompt on its cache.
  (void)model;
  (void)prompt;
  (void)max_new_tokens;
  (void)on_token;
  not_implemented("run_generate (adapters/adapters.cpp)");
}

ContinuedRun run_generate_from(const gpt2::Model& model, const std::vector<int>& prefix,
                               const std::vector<std::vector<int>>& suffixes, int max_new_tokens) {
  // run.continued: [n_suffixes], each with its own cache
  // TODO: the prefix saved once; per suffix, a generation on a cache of its own that
  // starts as the saved one (which never changes).
  (void)model;
  (void)prefix;
  (void)suffixes;
  (void)max_new_tokens;
  not_implemented("run_generate_from (adapters/adapters.cpp)");
}

GenerateRun run_speed(const gpt2::Model& model, int past, uint64_t past_seed,
                      const std::vector<int>& prompt, int max_new_tokens) {
  // run.cache: past + prompt + max_new_tokens - 1 positions a layer at the end
  // TODO: a fresh GenerateRun whose cache first gets the made-up past (fill_past, given in
  // course/speed.hpp), then generate_greedy of the prompt on that cache.
  (void)model;
  (void)past;
  (void)past_seed;
  (void)prompt;
  (void)max_new_tokens;
  not_implemented("run_speed (adapters/adapters.cpp)");
}

Q8Blocks run_q8_blocks(const std::vector<float>& values) {
  // values: [n_blocks * 32]; scales: [n_blocks]; codes, dequantized: [n_blocks * 32]
  // TODO: each block of 32 quantized with quantize_q8_0, its scale and codes kept, and the
  // block read back with dequantize_q8_0.
  (void)values;
  not_implemented("run_q8_blocks (adapters/adapters.cpp)");
}

Q8Run run_q8_decode(const gpt2::Model& model, const std::vector<int>& tokens) {
  // run.logits: [n_steps, vocab], step 0 first
  // TODO: a fresh Q8Run in which the tokens are decoded one step each with decode_step_q8,
  // in order, and every step's logits kept.
  (void)model;
  (void)tokens;
  not_implemented("run_q8_decode (adapters/adapters.cpp)");
}

ChunkedResult run_serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                                const std::vector<Request>& requests) {
  // TODO: serve_chunked's result.
  (void)model;
  (void)n_blocks;
  (void)budget;
  (void)requests;
  not_implemented("run_serve_chunked (adapters/adapters.cpp)");
}

}  // namespace course
