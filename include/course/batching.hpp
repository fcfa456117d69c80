// Stage 9 (continuous-batching): many requests served at once. Each step of the server's
// loop runs one decode row for every running sequence as a single batch through the model
// (one read of the weights for all of them), admits new requests as blocks allow, and
// retires the sequences that are done. Because every model function treats rows
// independently (model/DETERMINISM.md, promise (a)), a request's numbers are the same in a
// batch as alone, so the grader can check every request bit for bit. Both your code
// (src/batching.cpp) and the reference implement this header; leave it as it is.
#pragma once

#include <span>
#include <vector>

#include "course/decode.hpp"  // greedy(), given
#include "course/paged.hpp"

namespace course {

// One decode step for several sequences at once: row i is tokens[i] at position
// sequences[i]->length() of sequence i. Every sequence grows by one position; embed, qkv,
// finish_block and logits each run once on all rows; row i's k and v go into sequence i
// and row i attends over sequence i only (attend_one on PagedLayer(*sequences[i], l)).
// Returns [n, vocab] logits, row i for sequence i, equal to paged_decode_step's for that
// sequence alone. The sequences must be distinct and share one 12-layer pool.
std::vector<float> decode_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                                std::span<const int> tokens);

struct Request {
  std::vector<int> prompt;  // not empty
  int max_new_tokens = 1;   // >= 1: the request is done after generating this many
  int arrival = 0;          // the first step at which it may be admitted
};

// What happened at one step of the loop.
struct StepLog {
  std::vector<int> prefilled;  // requests admitted and prefilled at this step, in order
  std::vector<int> decoded;    // the rows of this step's batch: request ids, in row order
  int free_blocks = 0;         // the pool's free blocks at the end of the step
};

struct Served {
  std::vector<int> tokens;    // [max_new_tokens] generated, greedy
  std::vector<float> logits;  // [max_new_tokens * vocab]: the logits each token was chosen from
};

struct ServeResult {
  std::vector<Served> requests;  // [n_requests], by request id (their order in the input)
  std::vector<StepLog> steps;    // [n_steps]: step 0, 1, ... until every request is done
};

// The server's loop over a BlockPool(n_blocks, 12 layers), greedy, steps s = 0, 1, ...:
//  1. Admit: waiting requests with arrival <= s, in id order, stopping at the first that
//     does not fit. A request's full length is prompt + max_new_tokens - 1 positions (its
//     last token is never fed back); it fits if the free blocks, minus the blocks the
//     running sequences will still take to reach their full length, are at least
//     ceil(full length / 16).
//  2. Prefill each newly admitted request alone (paged_prefill); its first token is the
//     greedy choice from the prefill's logits.
//  3. Decode: one decode_batch over every running request admitted at an earlier step, in
//     id order, each fed its last token; each row's greedy choice is its next token.
//  4. Retire every request that now has max_new_tokens tokens: release its sequence.
// The loop ends after the step at which the last request retires. Throws
// std::invalid_argument for a request that could never fit in the pool.
ServeResult serve(const gpt2::Model& model, int n_blocks, const std::vector<Request>& requests);

}  // namespace course
