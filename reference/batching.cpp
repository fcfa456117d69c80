// Reference solution for src/batching.cpp (stage continuous-batching).
#include "course/batching.hpp"

#include <string>

#include "course/decode.hpp"

namespace course {

std::vector<float> decode_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                                std::span<const int> tokens) {
  const int n = int(sequences.size());
  if (n < 1 || tokens.size() != sequences.size())
    throw std::invalid_argument("decode_batch: one token per sequence, at least one sequence");
  std::vector<int> positions(size_t(n), 0);  // [n]: each row continues its own sequence
  for (int i = 0; i < n; ++i) positions[size_t(i)] = sequences[size_t(i)]->length();
  const size_t rows = size_t(n) * d_model;
  std::vector<float> x(rows), q(rows), k(rows), v(rows), attn(rows);  // [n, d_model] each
  model.embed(tokens.data(), positions.data(), n, x.data());
  for (PagedSequence* seq : sequences) seq->grow(1);
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), n, q.data(), k.data(), v.data());  // one pass of the weights for all rows
    for (int i = 0; i < n; ++i) {
      const size_t row = size_t(i) * d_model;
      PagedSequence& seq = *sequences[size_t(i)];
      seq.write(l, positions[size_t(i)], std::span<const float>(k).subspan(row, d_model),
                std::span<const float>(v).subspan(row, d_model));
      attend_one(std::span<const float>(q).subspan(row, d_model), PagedLayer(seq, l),
                 std::span<float>(attn).subspan(row, d_model));  // its own sequence only
    }
    model.finish_block(l, attn.data(), n, x.data());
  }
  std::vector<float> logits(size_t(n) * size_t(model.config().vocab));  // [n, vocab]
  model.logits(x.data(), n, logits.data());
  return logits;
}

namespace {

int blocks_for(int positions) { return (positions + block_size - 1) / block_size; }

// Positions a request's sequence holds when it is done: its last token is never fed back.
int full_length(const Request& r) { return int(r.prompt.size()) + r.max_new_tokens - 1; }

struct Running {
  int id;
  PagedSequence sequence;
  bool prefilled_now = false;
};

void keep(Served& served, std::span<const float> logits) {
  served.tokens.push_back(greedy(logits));
  served.logits.insert(served.logits.end(), logits.begin(), logits.end());
}

}  // namespace

ServeResult serve(const gpt2::Model& model, int n_blocks, const std::vector<Request>& requests) {
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].prompt.empty() || requests[i].max_new_tokens < 1 || blocks_for(full_length(requests[i])) > n_blocks)
      throw std::invalid_argument("serve: request " + std::to_string(i) + " is empty or can never fit in " +
                                  std::to_string(n_blocks) + " blocks");
  const size_t vocab = size_t(model.config().vocab);
  BlockPool pool(n_blocks, n_layers);
  ServeResult result;
  result.requests.resize(requests.size());
  std::vector<Running> running;  // in id order
  size_t next = 0;               // the first request not admitted yet
  for (int step = 0; next < requests.size() || !running.empty(); ++step) {
    StepLog log;
    // 1. Admit, in order, while the blocks the running sequences still need leave room.
    int committed = 0;
    for (const Running& r : running)
      committed += blocks_for(full_length(requests[size_t(r.id)])) - int(r.sequence.block_table().size());
    while (next < requests.size() && requests[next].arrival <= step &&
           pool.free_blocks() - committed >= blocks_for(full_length(requests[next]))) {
      committed += blocks_for(full_length(requests[next]));
      running.push_back({int(next), PagedSequence(pool), true});
      log.prefilled.push_back(int(next));
      ++next;
    }
    // 2. Prefill the new ones, each alone.
    for (Running& r : running) {
      if (!r.prefilled_now) continue;
      keep(result.requests[size_t(r.id)], paged_prefill(model, r.sequence, requests[size_t(r.id)].prompt));
    }
    // 3. One batch: a row for every request admitted before this step.
    std::vector<PagedSequence*> batch;
    std::vector<int> tokens;
    for (Running& r : running) {
      if (r.prefilled_now) continue;
      batch.push_back(&r.sequence);
      tokens.push_back(result.requests[size_t(r.id)].tokens.back());
      log.decoded.push_back(r.id);
    }
    if (!batch.empty()) {
      std::vector<float> logits = decode_batch(model, batch, tokens);  // [rows, vocab]
      for (size_t i = 0; i < batch.size(); ++i)
        keep(result.requests[size_t(log.decoded[i])], std::span<const float>(logits).subspan(i * vocab, vocab));
    }
    // 4. Retire the finished ones.
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      r.prefilled_now = false;
      if (int(result.requests[size_t(r.id)].tokens.size()) == requests[size_t(r.id)].max_new_tokens) {
        r.sequence.release();
        running.erase(running.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    }
    log.free_blocks = pool.free_blocks();
    result.steps.push_back(std::move(log));
  }
  return result;
}

}  // namespace course
