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
  // TODO: run the plan on a std::vector<KVCache> (from stage 6 on, `crop` steps too), then
  // snapshot every cache through key(h, p) / value(h, p) in [12, seq, 64] order (head
  // outermost, then pos, then dim).
  (void)plan;
  not_implemented("run_cache_plan (adapters/adapters.cpp)");
}

std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends) {
  // TODO: a fresh ModelCache, one append per entry of `appends` to that layer, then one
  // row {12, length, 64} per layer, layer 0 first.
  (void)appends;
  not_implemented("run_model_cache_shapes (adapters/adapters.cpp)");
}

CloneShapes run_model_cache_clone(const std::vector<int>& before, const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone) {
  // TODO: appends `before`, clone, `after_original` to the original, `after_clone` to the
  // copy; return the shape rows of both.
  (void)before;
  (void)after_original;
  (void)after_clone;
  not_implemented("run_model_cache_clone (adapters/adapters.cpp)");
}

CacheRun run_decode(const gpt2::Model& model, const std::vector<int>& tokens) {
  // run.logits: [n_steps, vocab], step 0 first
  // TODO: a fresh CacheRun; decode_step(model, run.cache, token) for each token in order,
  // appending each step's logits to run.logits.
  (void)model;
  (void)tokens;
  not_implemented("run_decode (adapters/adapters.cpp)");
}

CacheRun run_prefill(const gpt2::Model& model, const std::vector<std::vector<int>>& chunks) {
  // run.logits: [n_chunks, vocab], chunk 0 first
  // TODO: a fresh CacheRun; prefill(model, run.cache, chunk) for each chunk in order,
  // appending each chunk's logits to run.logits.
  (void)model;
  (void)chunks;
  not_implemented("run_prefill (adapters/adapters.cpp)");
}

ReuseRun run_prefix_reuse(const gpt2::Model& model, const std::vector<int>& prefix,
                          const std::vector<std::vector<int>>& suffixes) {
  // run.continued: [n_suffixes]; run.saved_rows: [n_suffixes][n_layers] rows {12, length, 64}
  // TODO: run.saved = save_prefix(model, prefix); then for each suffix, keep
  // continue_from(model, run.saved, suffix) and the saved cache's 12 shape rows.
  (void)model;
  (void)prefix;
  (void)suffixes;
  not_implemented("run_prefix_reuse (adapters/adapters.cpp)");
}

SpecRun run_speculative(const gpt2::Model& model, const std::vector<int>& prompt,
                        const std::vector<SpecRound>& rounds) {
  // run.logits: [n_rounds, vocab], one row per round's `next`
  // TODO: prefill the prompt into run.prompt_cache; run.cache = its clone(); per round:
  // n = length, decode_step each draft token, crop(n + accepted), decode_step(next) and keep
  // its logits.
  (void)model;
  (void)prompt;
  (void)rounds;
  not_implemented("run_speculative (adapters/adapters.cpp)");
}

PagedPlanResult run_paged_plan(int n_blocks, const std::vector<PagedOp>& plan) {
  // result.sequences: [n_sequences]; each snapshot's keys/values: [12, length, 64] of layer 0
  // TODO: BlockPool pool(n_blocks, 1) and a std::vector<PagedSequence>; run the plan
  // (append = grow(1) then write(0, length - 1, k, v)), recording in `exhausted` the index
  // of every step that throws PoolExhausted; then snapshot every sequence (length, table,
  // layer 0 read through key(0, h, p) / value(0, h, p)) and the pool's ref counts and free
  // blocks.
  (void)n_blocks;
  (void)plan;
  not_implemented("run_paged_plan (adapters/adapters.cpp)");
}

PagedForkRun run_paged_fork(const gpt2::Model& model, int n_blocks, const std::vector<int>& prompt,
                            const std::vector<std::vector<int>>& branches) {
  // run.logits: [n_branches][n_steps * vocab]
  // TODO: run.pool = a BlockPool(n_blocks, 12); paged_prefill the prompt into a root
  // sequence; per branch, fork the root and paged_decode_step its tokens (keep the logits);
  // release the root at the end.
  (void)model;
  (void)n_blocks;
  (void)prompt;
  (void)branches;
  not_implemented("run_paged_fork (adapters/adapters.cpp)");
}

PrefixRun run_prefix_trace(const gpt2::Model& model, int n_blocks,
                           const std::vector<std::vector<int>>& prompts) {
  // run.logits: [n_requests][vocab]; run.ref_counts: [n_blocks]
  // TODO: a BlockPool(n_blocks, 12) and a PrefixCache on it; per prompt: lookup, keep the
  // cached length, make_room for the blocks the rest needs, paged_prefill the rest, insert,
  // release; at the end the cache's entries and evicted keys and the pool's counts.
  (void)model;
  (void)n_blocks;
  (void)prompts;
  not_implemented("run_prefix_trace (adapters/adapters.cpp)");
}

GenerateRun run_generate(const gpt2::Model& model, const std::vector<int>& prompt, int max_new_tokens,
                         const TokenSink& on_token) {
  // run.generated.logits: [max_new_tokens, vocab]
  // TODO: generate_greedy on run.cache (a fresh ModelCache), passing on_token through.
  (void)model;
  (void)prompt;
  (void)max_new_tokens;
  (void)on_token;
  not_implemented("run_generate (adapters/adapters.cpp)");
}

ContinuedRun run_generate_from(const gpt2::Model& model, const std::vector<int>& prefix,
                               const std::vector<std::vector<int>>& suffixes, int max_new_tokens) {
  // run.continued: [n_suffixes], each with its own cache
  // TODO: run.saved = save_prefix(prefix); per suffix, a GenerateRun whose cache is a clone()
  // of run.saved.cache (never the saved cache itself), then generate_greedy of the suffix
  // on it.
  (void)model;
  (void)prefix;
  (void)suffixes;
  (void)max_new_tokens;
  not_implemented("run_generate_from (adapters/adapters.cpp)");
}

}  // namespace course
