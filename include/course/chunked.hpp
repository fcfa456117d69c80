// Stage 12 (chunked-prefill): the server of stage 9 with a token budget per step. A long
// prompt is not prefilled at once, holding every running sequence back while it runs; it
// is cut into chunks, and each step's one batch carries the running sequences' decode rows
// and the next chunk of a prompt together, at most `budget` rows in all (unless the decode
// rows alone are more: they always run). Because every
// model function treats rows independently (model/DETERMINISM.md, promise (a)) and a
// chunk attends over everything its sequence already holds, the numbers do not depend on
// the chunking: every request gets the same tokens and logits, bit for bit, as when its
// prompt is prefilled whole. Both your code (src/chunked.cpp) and the reference implement
// this header; leave it as it is.
#pragma once

#include <span>
#include <vector>

#include "course/batching.hpp"  // Request, Served, given
#include "course/paged.hpp"

namespace course {

// One batch of several sequences, each adding some rows: item i appends chunks[i] (one
// token for a decode row, several for a piece of a prompt) to sequences[i], at positions
// sequences[i]->length(), length() + 1, ... The rows are all the items' tokens, item 0's
// first, in order. embed, qkv and finish_block each run once on all rows, logits once on
// every item's last row. Item i's
// rows are written into sequence i, and attend causally over sequence i only: the
// positions it held before the step and the item's own rows up to each one
// (attend_causal on PagedLayer(*sequences[i], l) with n_rows = chunks[i].size()). Returns
// [n_items, vocab]: row i the logits of item i's last row. The sequences must be distinct,
// share one 12-layer pool, and each chunk must hold at least one token.
std::vector<float> mixed_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                               std::span<const std::vector<int>> chunks);

// A piece of a prompt prefilled at one step: request `id`'s prompt positions [from, to).
struct ChunkLog {
  int id = 0;
  int from = 0;
  int to = 0;
};

// What happened at one step of the loop.
struct ChunkedStepLog {
  std::vector<int> admitted;      // requests admitted at this step, in id order
  std::vector<int> decoded;       // the batch's decode rows: request ids, in row order
  std::vector<ChunkLog> chunks;   // the batch's prompt pieces, in row order, after the decodes
  int free_blocks = 0;            // the pool's free blocks at the end of the step
};

struct ChunkedResult {
  std::vector<Served> requests;        // [n_requests], by request id
  std::vector<ChunkedStepLog> steps;   // [n_steps]: step 0, 1, ... until every request is done
};

// The server's loop over a BlockPool(n_blocks, 12 layers), greedy, at most `budget` rows a
// step, steps s = 0, 1, ...:
//  1. Admit exactly as serve() does (stage 9): waiting requests with arrival <= s, in id
//     order, while ceil(full length / 16) blocks fit beside what the running sequences
//     will still take.
//  2. Decode rows: every running request whose prompt is wholly prefilled (its first token
//     chosen at an earlier step), in id order, one row each, fed its last token. They all
//     run, and each counts against the budget.
//  3. Prompt pieces: with the budget left (budget minus the decode rows), the requests still
//     prefilling, in id order: each takes as many of its prompt's remaining tokens as the
//     budget left allows, at least one, until the budget is spent.
//  4. One mixed_batch of the decode rows, then the pieces, in that order (if any row at all).
//     A decode row's greedy choice is its request's next token. A piece that ends its
//     prompt gives the request its first token, the greedy choice from the logits of the
//     prompt's last position; a piece that does not end it gives no token.
//  5. Retire every request that now has max_new_tokens tokens: release its sequence.
// The loop ends after the step at which the last request retires. Throws
// std::invalid_argument for a budget below 1, or a request that could never fit.
ChunkedResult serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                            const std::vector<Request>& requests);

}  // namespace course
