// Your preempting server: stage 13 (preemption).
//
// The declarations, with the exact contract of each function, are in
// include/course/preemption.hpp; read it first. It builds on stage 9 (src/batching.cpp):
// the same requests, the same pool and the same decode_batch, but a request is admitted as
// soon as its prompt fits. When the running requests then need more blocks than the pool
// has free, the one admitted most recently is taken out, by swap (its blocks' bytes copied
// out, and back in later) or by recompute (its blocks freed, and its tokens prefilled
// again later). Either way its numbers stay those of an uninterrupted run, bit for bit.
//
// Shapes: SwappedSequence::keys and ::values are [n_blocks, n_layers, block_size, d_model],
// block i being the sequence's table entry i. This file leaves out priorities (every
// request weighs the same) and chunked prompts (stage 12).
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/preemption.hpp"

#include "course/not_implemented.hpp"

namespace course {

SwappedSequence swap_out(PagedSequence& sequence) {
  // keys, values:   [n_blocks, n_layers, block_size, d_model], block i = table entry i
  // TODO: copy every block of the sequence, every layer, out of the pool; then release the
  // sequence.
  (void)sequence;
  not_implemented("swap_out (src/preemption.cpp)");
}

void swap_in(PagedSequence& sequence, const SwappedSequence& saved) {
  // TODO: an empty sequence grown to saved.length (new blocks), every block given its saved
  // bytes back; nothing changed when the pool has too few free blocks.
  (void)sequence;
  (void)saved;
  not_implemented("swap_in (src/preemption.cpp)");
}

PreemptResult serve_preemptive(const gpt2::Model& model, int n_blocks, PreemptMode mode,
                               const std::vector<Request>& requests) {
  // result.requests: [n_requests]; result.steps: one PreemptStepLog per step
  // TODO: the loop of preemption.hpp: admit or resume in id order while the prompt (or the
  // cached length) fits beside the decode rows' new blocks; decode the requests running
  // before the step, preempting the most recently admitted while their blocks do not fit;
  // retire the finished ones.
  (void)model;
  (void)n_blocks;
  (void)mode;
  (void)requests;
  not_implemented("serve_preemptive (src/preemption.cpp)");
}

}  // namespace course
