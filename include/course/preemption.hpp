// Stage 13 (preemption): the server of stage 9, admitting optimistically. Stage 9 admits a
// request only when its whole future fits beside the running sequences' futures, so its
// pool never runs dry, and most of it sits reserved and empty. A server that admits as soon
// as the prompt fits serves more requests at once, but the running sequences can then need
// more blocks than the pool has left. It must preempt one: take a running request out,
// give its blocks back, and bring it back later, either
//   - by swap: its blocks' bytes are copied out to host memory and copied back into
//     (other) blocks of the pool when it resumes; or
//   - by recompute: its blocks are simply freed; when it resumes, its prompt and the tokens
//     it had generated are prefilled again.
// Either way a preempted request's numbers do not change: swapping copies bytes, and a
// prefill gives the same bits as decoding the same tokens one at a time (stage 4), so every
// request gets the tokens and logits of an uninterrupted run, bit for bit.
// Both your code (src/preemption.cpp) and the reference implement this header; leave it as
// it is.
#pragma once

#include <vector>

#include "course/batching.hpp"  // Request, Served, decode_batch
#include "course/paged.hpp"

namespace course {

// A sequence's cache held outside the pool: each of its blocks, in table order, every layer.
struct SwappedSequence {
  int length = 0;             // the sequence's length when it was swapped out
  int n_layers = 0;           // its pool's layers
  std::vector<float> keys;    // [n_blocks, n_layers, block_size, d_model], block i = table[i]
  std::vector<float> values;  // the same for values
};

// Copies every block of `sequence` (all of its block_size positions, every layer; block i
// of the result is table entry i) out of the pool, then releases the sequence: it is left
// empty and its blocks are free again (unless another sequence shares them).
SwappedSequence swap_out(PagedSequence& sequence);

// The reverse: `sequence` must be empty; it grows to saved.length positions (new blocks,
// the lowest free ones, in position order) and every block gets the saved bytes back. Its
// block table may differ from the one it had; its keys and values are the same, bit for
// bit. All or nothing: throws PoolExhausted, changing nothing, when the pool has too few
// free blocks. Throws std::invalid_argument when the sequence is not empty or its pool's
// layers differ from saved.n_layers.
void swap_in(PagedSequence& sequence, const SwappedSequence& saved);

enum class PreemptMode { swap, recompute };

// What happened at one step of the loop.
struct PreemptStepLog {
  std::vector<int> admitted;   // new requests admitted and prefilled at this step, in order
  std::vector<int> resumed;    // preempted requests brought back at this step, in order
  std::vector<int> preempted;  // requests preempted at this step, in the order chosen
  std::vector<int> decoded;    // the rows of this step's batch: request ids, in row order
  int free_blocks = 0;         // the pool's free blocks at the end of the step
  int swapped_blocks = 0;      // blocks held outside the pool at the end of the step
};

struct PreemptResult {
  std::vector<Served> requests;       // [n_requests], by request id
  std::vector<PreemptStepLog> steps;  // [n_steps]: step 0, 1, ... until every request is done
};

// The server's loop over a BlockPool(n_blocks, 12 layers), greedy, steps s = 0, 1, ...
// A request's cached length is the positions its sequence holds: prompt + tokens - 1 once
// it has tokens (its last token is fed at the next decode). Admission order counts every
// admission and every resumption, one after another.
//  1. Admit: the waiting requests (never admitted, arrival <= s; or preempted), in id
//     order, stopping at the first that does not fit. It needs ceil(prompt / 16) blocks
//     if new, or ceil(cached length / 16) if preempted. It fits if the free blocks, minus
//     the new blocks this step's decode rows will take (one for each request running
//     before this step whose cached length is a multiple of 16), are at least that.
//  2. In that order: prefill each new request alone (paged_prefill); its first token is
//     the greedy choice from the prefill's logits. Resume each preempted one: by swap,
//     swap_in its saved cache; by recompute, paged_prefill its prompt followed by all its
//     tokens but the last, and keep no logits (its next token comes from the next decode).
//  3. Decode the requests that were running before this step, in id order. While the new
//     blocks their rows need (one for each whose cached length is a multiple of 16) are
//     more than the free blocks: preempt the running request admitted most recently (it
//     leaves the batch if it was in it): by swap, swap_out; by recompute, release its
//     sequence. Then one decode_batch of those left, each fed its last token; each row's
//     greedy choice is its next token.
//  4. Retire every request that now has max_new_tokens tokens: release its sequence.
// The loop ends after the step at which the last request retires. Throws
// std::invalid_argument for a request whose full length (prompt + max_new_tokens - 1)
// needs more blocks than the pool has: it could never run.
PreemptResult serve_preemptive(const gpt2::Model& model, int n_blocks, PreemptMode mode,
                               const std::vector<Request>& requests);

}  // namespace course
