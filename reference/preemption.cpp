// Reference solution for src/preemption.cpp (stage preemption).
#include "course/preemption.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "course/decode.hpp"

namespace course {

namespace {

constexpr size_t kBlockFloats = size_t(block_size) * d_model;  // one layer of one block

// Where block i, layer l starts in a SwappedSequence's buffers:
// [n_blocks, n_layers, block_size, d_model], block-major.
size_t saved_offset(int block, int layer, int layers) {
  return (size_t(block) * size_t(layers) + size_t(layer)) * kBlockFloats;
}

}  // namespace

SwappedSequence swap_out(PagedSequence& sequence) {
  const BlockPool& pool = sequence.pool();
  const std::vector<int>& table = sequence.block_table();
  SwappedSequence saved;
  saved.length = sequence.length();
  saved.n_layers = pool.n_layers();
  saved.keys.resize(table.size() * size_t(saved.n_layers) * kBlockFloats);
  saved.values.resize(saved.keys.size());
  for (size_t i = 0; i < table.size(); ++i)
    for (int l = 0; l < saved.n_layers; ++l) {
      const size_t at = saved_offset(int(i), l, saved.n_layers);
      const std::span<const float> k = pool.keys(table[i], l), v = pool.values(table[i], l);
      std::copy(k.begin(), k.end(), saved.keys.begin() + std::ptrdiff_t(at));
      std::copy(v.begin(), v.end(), saved.values.begin() + std::ptrdiff_t(at));
    }
  sequence.release();
  return saved;
}

void swap_in(PagedSequence& sequence, const SwappedSequence& saved) {
  if (sequence.length() != 0 || !sequence.block_table().empty())
    throw std::invalid_argument("swap_in: the sequence is not empty");
  BlockPool& pool = sequence.pool();
  if (pool.n_layers() != saved.n_layers)
    throw std::invalid_argument("swap_in: the saved sequence has " +
                                std::to_string(saved.n_layers) + " layers, the pool " +
                                std::to_string(pool.n_layers()));
  sequence.grow(saved.length);  // all or nothing: PoolExhausted leaves it empty
  const std::vector<int>& table = sequence.block_table();
  for (size_t i = 0; i < table.size(); ++i)
    for (int l = 0; l < saved.n_layers; ++l) {
      const size_t at = saved_offset(int(i), l, saved.n_layers);
      const float* k = saved.keys.data() + at;
      const float* v = saved.values.data() + at;
      std::copy(k, k + kBlockFloats, pool.keys(table[i], l).begin());
      std::copy(v, v + kBlockFloats, pool.values(table[i], l).begin());
    }
}

namespace {

int blocks_for(int positions) { return (positions + block_size - 1) / block_size; }

// A request the server has admitted at least once.
struct Admitted {
  PagedSequence sequence;
  SwappedSequence saved;    // its cache while it is swapped out
  bool running = false;     // holds its blocks in the pool
  bool joined_now = false;  // admitted or resumed at this step: no decode row yet
  long order = 0;           // when it was last admitted or resumed
};

void keep(Served& served, std::span<const float> logits) {
  served.tokens.push_back(greedy(logits));
  served.logits.insert(served.logits.end(), logits.begin(), logits.end());
}

}  // namespace

PreemptResult serve_preemptive(const gpt2::Model& model, int n_blocks, PreemptMode mode,
                               const std::vector<Request>& requests) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (r.prompt.empty() || r.max_new_tokens < 1 ||
        blocks_for(int(r.prompt.size()) + r.max_new_tokens - 1) > n_blocks)
      throw std::invalid_argument("serve_preemptive: request " + std::to_string(i) +
                                  " is empty or can never fit in " + std::to_string(n_blocks) +
                                  " blocks");
  }
  const size_t vocab = size_t(model.config().vocab);
  const size_t n = requests.size();
  BlockPool pool(n_blocks, n_layers);
  PreemptResult result;
  result.requests.resize(n);
  std::vector<Admitted> state;
  state.reserve(n);
  for (size_t i = 0; i < n; ++i) state.push_back({PagedSequence(pool), {}, false, false, 0});
  std::vector<bool> started(n, false), done(n, false);
  size_t n_done = 0;
  long admissions = 0;
  // The cached length of request i: prompt + tokens - 1 once it has tokens.
  auto cached = [&](size_t i) {
    return int(requests[i].prompt.size() + result.requests[i].tokens.size()) - 1;
  };
  auto waiting = [&](size_t i, int step) {
    return !done[i] && !state[i].running && (started[i] || requests[i].arrival <= step);
  };
  for (int step = 0; n_done < n; ++step) {
    PreemptStepLog log;
    // 1. Admit, in id order, the waiting requests while each fits beside the blocks this
    //    step's decode rows will take.
    int decode_blocks = 0;
    for (size_t i = 0; i < n; ++i)
      if (state[i].running && cached(i) % block_size == 0) ++decode_blocks;
    for (size_t i = 0; i < n; ++i) {
      if (!waiting(i, step)) continue;
      const int need =
          started[i] ? blocks_for(cached(i)) : blocks_for(int(requests[i].prompt.size()));
      if (pool.free_blocks() - decode_blocks < need) break;
      state[i].running = true;  // its blocks are taken below, before the next one is weighed
      state[i].joined_now = true;
      state[i].order = ++admissions;
      // 2. Prefill a new request alone; resume a preempted one.
      if (!started[i]) {
        started[i] = true;
        log.admitted.push_back(int(i));
        keep(result.requests[i], paged_prefill(model, state[i].sequence, requests[i].prompt));
      } else if (mode == PreemptMode::swap) {
        log.resumed.push_back(int(i));
        swap_in(state[i].sequence, state[i].saved);
        state[i].saved = SwappedSequence{};
      } else {
        log.resumed.push_back(int(i));
        std::vector<int> tokens = requests[i].prompt;
        const std::vector<int>& generated = result.requests[i].tokens;
        tokens.insert(tokens.end(), generated.begin(), generated.end() - 1);
        paged_prefill(model, state[i].sequence, tokens);  // its logits are not kept
      }
    }
    // 3. The batch: the requests running before this step, in id order. Preempt the most
    //    recently admitted running request while their new blocks do not fit.
    auto batch_needs = [&] {
      int need = 0;
      for (size_t i = 0; i < n; ++i)
        if (state[i].running && !state[i].joined_now && cached(i) % block_size == 0) ++need;
      return need;
    };
    while (batch_needs() > pool.free_blocks()) {
      size_t victim = n;
      for (size_t i = 0; i < n; ++i)
        if (state[i].running && (victim == n || state[i].order > state[victim].order)) victim = i;
      state[victim].running = false;
      state[victim].joined_now = false;
      log.preempted.push_back(int(victim));
      if (mode == PreemptMode::swap)
        state[victim].saved = swap_out(state[victim].sequence);
      else
        state[victim].sequence.release();
    }
    std::vector<PagedSequence*> batch;
    std::vector<int> tokens;
    for (size_t i = 0; i < n; ++i) {
      if (!state[i].running || state[i].joined_now) continue;
      batch.push_back(&state[i].sequence);
      tokens.push_back(result.requests[i].tokens.back());
      log.decoded.push_back(int(i));
    }
    if (!batch.empty()) {
      const std::vector<float> logits = decode_batch(model, batch, tokens);  // [rows, vocab]
      for (size_t r = 0; r < batch.size(); ++r)
        keep(result.requests[size_t(log.decoded[r])],
             std::span<const float>(logits).subspan(r * vocab, vocab));
    }
    // 4. Retire the finished ones.
    int swapped = 0;
    for (size_t i = 0; i < n; ++i) {
      state[i].joined_now = false;
      if (state[i].running && int(result.requests[i].tokens.size()) == requests[i].max_new_tokens) {
        state[i].sequence.release();
        state[i].running = false;
        done[i] = true;
        ++n_done;
      }
      swapped += int(state[i].saved.keys.size() / (size_t(n_layers) * kBlockFloats));
    }
    log.free_blocks = pool.free_blocks();
    log.swapped_blocks = swapped;
    result.steps.push_back(std::move(log));
  }
  return result;
}

}  // namespace course
