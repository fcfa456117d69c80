// Your chunked-prefill server: stage 12 (chunked-prefill).
//
// The declarations, with the exact contract of each function, are in
// include/course/chunked.hpp; read it first. It builds on stage 9 (src/batching.cpp):
// the same admission rule over the same block pool, but each step runs one batch of at
// most `budget` rows, the running sequences' decode rows and pieces of the prompts still
// being prefilled side by side. A piece attends causally over everything its sequence
// holds (your stage 4 attend_causal on a PagedLayer), so the numbers are those of a whole
// prefill, bit for bit, however the prompts are cut.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/chunked.hpp"

#include "course/decode.hpp"
#include "course/not_implemented.hpp"

namespace course {

std::vector<float> mixed_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                               std::span<const std::vector<int>> chunks) {
  // rows:               every item's tokens, item 0's first
  // x, q, k, v, attn:   [rows, d_model]
  // returns:            [n_items, vocab], item i's last row
  // TODO: one batch through the model for every item's rows; each item's rows go into its
  // own sequence and attend causally over it; the logits of each item's last row.
  (void)model;
  (void)sequences;
  (void)chunks;
  not_implemented("mixed_batch (src/chunked.cpp)");
}

ChunkedResult serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                            const std::vector<Request>& requests) {
  // TODO: stage 9's loop, with one mixed batch a step: decode rows first, then pieces of
  // the prompts still prefilling, at most `budget` rows in all.
  (void)model;
  (void)n_blocks;
  (void)budget;
  (void)requests;
  not_implemented("serve_chunked (src/chunked.cpp)");
}

}  // namespace course
