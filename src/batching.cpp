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
  // TODO: positions, embed all rows, grow(1) every sequence; per layer: qkv of all rows,
  // then per row write into its own sequence and attend_one over PagedLayer(its sequence, l);
  // finish_block of all rows; logits of all rows.
  (void)model;
  (void)sequences;
  (void)tokens;
  not_implemented("decode_batch (src/batching.cpp)");
}

ServeResult serve(const gpt2::Model& model, int n_blocks, const std::vector<Request>& requests) {
  // result.requests: [n_requests]; result.steps: one StepLog per step
  // TODO: the loop in batching.hpp: per step admit (in id order, while the free blocks minus
  // what the running sequences will still take leave room for the whole request), prefill
  // the admitted, decode one batch of the earlier ones, retire the finished (release).
  (void)model;
  (void)n_blocks;
  (void)requests;
  not_implemented("serve (src/batching.cpp)");
}

}  // namespace course
