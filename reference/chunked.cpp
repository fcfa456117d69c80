// Reference solution for src/chunked.cpp (stage chunked-prefill).
#include "course/chunked.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "course/decode.hpp"

namespace course {

std::vector<float> mixed_batch(const gpt2::Model& model, std::span<PagedSequence* const> sequences,
                               std::span<const std::vector<int>> chunks) {
  const size_t n_items = sequences.size();
  if (n_items < 1 || chunks.size() != n_items)
    throw std::invalid_argument("mixed_batch: one chunk per sequence, at least one sequence");
  std::vector<int> tokens, positions;  // [rows]
  std::vector<size_t> first_row;       // [n_items]: where item i's rows start
  for (size_t i = 0; i < n_items; ++i) {
    if (chunks[i].empty()) throw std::invalid_argument("mixed_batch: an empty chunk");
    first_row.push_back(tokens.size());
    const int start = sequences[i]->length();
    for (size_t j = 0; j < chunks[i].size(); ++j) {
      tokens.push_back(chunks[i][j]);
      positions.push_back(start + int(j));
    }
  }
  const int rows = int(tokens.size());
  const size_t floats = size_t(rows) * d_model;
  std::vector<float> x(floats), q(floats), k(floats), v(floats), attn(floats);  // [rows, d_model]
  model.embed(tokens.data(), positions.data(), rows, x.data());
  for (size_t i = 0; i < n_items; ++i) sequences[i]->grow(int(chunks[i].size()));
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), rows, q.data(), k.data(), v.data());  // one pass of the weights
    for (size_t i = 0; i < n_items; ++i) {
      PagedSequence& seq = *sequences[i];
      const size_t n = chunks[i].size(), at = first_row[i] * d_model;
      for (size_t j = 0; j < n; ++j)
        seq.write(l, positions[first_row[i] + j], std::span<const float>(k).subspan(at + j * d_model, d_model),
                  std::span<const float>(v).subspan(at + j * d_model, d_model));
      attend_causal(std::span<const float>(q).subspan(at, n * d_model), int(n), PagedLayer(seq, l),
                    std::span<float>(attn).subspan(at, n * d_model));
    }
    model.finish_block(l, attn.data(), rows, x.data());
  }
  // Only each item's last row becomes logits.
  const size_t vocab = size_t(model.config().vocab);
  std::vector<float> last(n_items * d_model);
  for (size_t i = 0; i < n_items; ++i) {
    const size_t row = first_row[i] + chunks[i].size() - 1;
    std::copy_n(x.begin() + std::ptrdiff_t(row * d_model), d_model, last.begin() + std::ptrdiff_t(i * d_model));
  }
  std::vector<float> logits(n_items * vocab);  // [n_items, vocab]
  model.logits(last.data(), int(n_items), logits.data());
  return logits;
}

namespace {

int blocks_for(int positions) { return (positions + block_size - 1) / block_size; }

int full_length(const Request& r) { return int(r.prompt.size()) + r.max_new_tokens - 1; }

struct Running {
  int id;
  PagedSequence sequence;
  int prefilled = 0;  // prompt positions in the cache so far
};

}  // namespace

ChunkedResult serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                            const std::vector<Request>& requests) {
  if (budget < 1) throw std::invalid_argument("serve_chunked: the budget must be at least 1 row");
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].prompt.empty() || requests[i].max_new_tokens < 1 || blocks_for(full_length(requests[i])) > n_blocks)
      throw std::invalid_argument("serve_chunked: request " + std::to_string(i) + " is empty or can never fit in " +
                                  std::to_string(n_blocks) + " blocks");
  const size_t vocab = size_t(model.config().vocab);
  BlockPool pool(n_blocks, n_layers);
  ChunkedResult result;
  result.requests.resize(requests.size());
  std::vector<Running> running;  // in id order
  size_t next = 0;
  for (int step = 0; next < requests.size() || !running.empty(); ++step) {
    ChunkedStepLog log;
    // 1. Admit, as serve() does.
    int committed = 0;
    for (const Running& r : running)
      committed += blocks_for(full_length(requests[size_t(r.id)])) - int(r.sequence.block_table().size());
    while (next < requests.size() && requests[next].arrival <= step &&
           pool.free_blocks() - committed >= blocks_for(full_length(requests[next]))) {
      committed += blocks_for(full_length(requests[next]));
      running.push_back({int(next), PagedSequence(pool), 0});
      log.admitted.push_back(int(next));
      ++next;
    }
    // 2. and 3. The batch: decode rows first, then prompt pieces within the budget left.
    std::vector<PagedSequence*> batch;
    std::vector<std::vector<int>> chunks;
    std::vector<Running*> owners;
    for (Running& r : running) {
      const Request& req = requests[size_t(r.id)];
      if (r.prefilled < int(req.prompt.size())) continue;
      batch.push_back(&r.sequence);
      chunks.push_back({result.requests[size_t(r.id)].tokens.back()});
      owners.push_back(&r);
      log.decoded.push_back(r.id);
    }
    int left = budget - int(batch.size());
    for (Running& r : running) {
      const Request& req = requests[size_t(r.id)];
      if (left <= 0) break;
      if (r.prefilled >= int(req.prompt.size())) continue;
      const int take = std::min(left, int(req.prompt.size()) - r.prefilled);
      batch.push_back(&r.sequence);
      chunks.emplace_back(req.prompt.begin() + r.prefilled, req.prompt.begin() + r.prefilled + take);
      owners.push_back(&r);
      log.chunks.push_back({r.id, r.prefilled, r.prefilled + take});
      left -= take;
    }
    // 4. One batch; the decode rows and the pieces that end a prompt choose a token.
    if (!batch.empty()) {
      const std::vector<float> logits = mixed_batch(model, batch, chunks);  // [items, vocab]
      for (size_t i = 0; i < batch.size(); ++i) {
        Running& r = *owners[i];
        const Request& req = requests[size_t(r.id)];
        const bool decode = i < log.decoded.size();
        if (!decode) {
          r.prefilled += int(chunks[i].size());
          if (r.prefilled < int(req.prompt.size())) continue;
        }
        Served& served = result.requests[size_t(r.id)];
        const std::span<const float> row = std::span<const float>(logits).subspan(i * vocab, vocab);
        served.tokens.push_back(greedy(row));
        served.logits.insert(served.logits.end(), row.begin(), row.end());
      }
    }
    // 5. Retire.
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
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
