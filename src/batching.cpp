// Your server loop: stage 9 (continuous-batching).
//
// The declarations are in include/course/batching.hpp; read them first. Two pieces:
//
//   decode_batch   stage 3's decode step for n sequences at once: the model functions run
//                  once on [n, d_model] rows, and only the cache part is per sequence
//   serve          the scheduler: admit, prefill, decode one batch, retire, step after step
//
// Shapes: tokens [n]; x, q, k, v, attn [n, d_model]; logits [n, vocab]. This file leaves
// out preemption (a server that admits too much must push sequences out again; here the
// admission rule makes sure it never has to), sampling other than greedy, and prefix
// sharing (stage 8).
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/batching.hpp"
#include "course/not_implemented.hpp"

namespace course {

std::vector<float> decode_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                                std::span<const int> tokens) {
  // positions: [n]   row i's position is sequences[i]->length() before the step
  // TODO: one decode step for every sequence at once: row i gives exactly what
  // paged_decode_step would give sequences[i] alone; the model's functions run once on all rows.
  (void)model;
  (void)sequences;
  (void)tokens;
  not_implemented("decode_batch (src/batching.cpp)");
}

ServeResult serve(const gpt2::Model& model, int n_blocks, const std::vector<Request>& requests) {
  // result.requests: [n_requests]; result.steps: one StepLog per step
  // TODO: the server loop of batching.hpp: every request served to its max_new_tokens, one StepLog
  // per step; admission in id order, only when the pool can hold the request's whole need
  // next to what the running requests (admitted this step included) will still take.
  (void)model;
  (void)n_blocks;
  (void)requests;
  not_implemented("serve (src/batching.cpp)");
}

}  // namespace course
