// Reference solution for adapters/adapters.cpp.
#include "course/adapters.hpp"

#include <span>
#include <stdexcept>
#include <string>

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  std::vector<KVCache> caches;
  for (const CacheOp& op : plan) {
    switch (op.kind) {
      case CacheOp::Kind::create: caches.emplace_back(); break;
      case CacheOp::Kind::append: caches.at(op.cache).append(op.k, op.v); break;
      case CacheOp::Kind::clone: caches.push_back(caches.at(op.cache).clone()); break;
      case CacheOp::Kind::crop: caches.at(op.cache).crop(op.n); break;
    }
  }
  std::vector<CacheSnapshot> snapshots;
  for (const KVCache& cache : caches) {
    CacheSnapshot s;
    const int seq = cache.length();
    s.shape = {n_heads, seq, head_dim};
    // Read through the logical view, head-major: [12, seq, 64].
    for (int h = 0; h < n_heads; ++h) {
      for (int p = 0; p < seq; ++p) {
        auto k = cache.key(h, p);
        auto v = cache.value(h, p);
        s.keys.insert(s.keys.end(), k.begin(), k.end());
        s.values.insert(s.values.end(), v.begin(), v.end());
      }
    }
    snapshots.push_back(std::move(s));
  }
  return snapshots;
}

namespace {

std::vector<ShapeRow> shape_rows(const ModelCache& mc) {
  std::vector<ShapeRow> rows;
  for (int l = 0; l < n_layers; ++l) rows.push_back({n_heads, mc.layer(l).length(), head_dim});
  return rows;
}

void append_dummy(ModelCache& mc, const std::vector<int>& layers) {
  const std::vector<float> k(d_model, 0.0f), v(d_model, 0.0f);
  for (int l : layers) mc.layer(l).append(k, v);
}

}  // namespace

std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends) {
  ModelCache mc;
  append_dummy(mc, appends);
  return shape_rows(mc);
}

CloneShapes run_model_cache_clone(const std::vector<int>& before, const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone) {
  ModelCache original;
  append_dummy(original, before);
  ModelCache copy = original.clone();
  append_dummy(original, after_original);
  append_dummy(copy, after_clone);
  return {shape_rows(original), shape_rows(copy)};
}

CacheRun run_decode(const gpt2::Model& model, const std::vector<int>& tokens) {
  CacheRun run;
  for (int token : tokens) {
    std::vector<float> step = decode_step(model, run.cache, token);  // [vocab]
    run.logits.insert(run.logits.end(), step.begin(), step.end());
  }
  return run;
}

CacheRun run_prefill(const gpt2::Model& model, const std::vector<std::vector<int>>& chunks) {
  CacheRun run;
  for (const std::vector<int>& chunk : chunks) {
    std::vector<float> last = prefill(model, run.cache, chunk);  // [vocab]
    run.logits.insert(run.logits.end(), last.begin(), last.end());
  }
  return run;
}

ReuseRun run_prefix_reuse(const gpt2::Model& model, const std::vector<int>& prefix,
                          const std::vector<std::vector<int>>& suffixes) {
  ReuseRun run;
  run.saved = save_prefix(model, prefix);
  for (const std::vector<int>& suffix : suffixes) {
    run.continued.push_back(continue_from(model, run.saved, suffix));
    run.saved_rows.push_back(shape_rows(run.saved.cache));
  }
  return run;
}

SpecRun run_speculative(const gpt2::Model& model, const std::vector<int>& prompt,
                        const std::vector<SpecRound>& rounds) {
  SpecRun run;
  prefill(model, run.prompt_cache, prompt);
  run.cache = run.prompt_cache.clone();  // speculate on a copy: the prompt's cache stays as it is
  for (const SpecRound& round : rounds) {
    const int n = run.cache.layer(0).length();
    for (int token : round.draft) decode_step(model, run.cache, token);
    run.cache.crop(n + round.accepted);  // forget the rejected drafts
    std::vector<float> step = decode_step(model, run.cache, round.next);  // [vocab]
    run.logits.insert(run.logits.end(), step.begin(), step.end());
  }
  return run;
}

namespace {

// Layer 0 of a sequence in the logical [12, length, 64] order.
PagedSnapshot snapshot(const PagedSequence& seq) {
  PagedSnapshot s;
  s.length = seq.length();
  s.block_table = seq.block_table();
  for (int h = 0; h < n_heads; ++h) {
    for (int p = 0; p < seq.length(); ++p) {
      auto k = seq.key(0, h, p);
      auto v = seq.value(0, h, p);
      s.keys.insert(s.keys.end(), k.begin(), k.end());
      s.values.insert(s.values.end(), v.begin(), v.end());
    }
  }
  return s;
}

}  // namespace

PagedPlanResult run_paged_plan(int n_blocks, const std::vector<PagedOp>& plan) {
  BlockPool pool(n_blocks, 1);
  std::vector<PagedSequence> seqs;
  PagedPlanResult result;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PagedOp& op = plan[i];
    try {
      switch (op.kind) {
        case PagedOp::Kind::create: seqs.emplace_back(pool); break;
        case PagedOp::Kind::append: {
          PagedSequence& seq = seqs.at(size_t(op.sequence));
          seq.grow(op.n);  // once for all n positions: all or nothing
          for (int i = 0; i < op.n; ++i) {
            const size_t row = size_t(i) * d_model;
            seq.write(0, seq.length() - op.n + i,
                      std::span<const float>(op.k).subspan(row, d_model),
                      std::span<const float>(op.v).subspan(row, d_model));
          }
          break;
        }
        case PagedOp::Kind::fork: seqs.push_back(seqs.at(size_t(op.sequence)).fork()); break;
        case PagedOp::Kind::release: seqs.at(size_t(op.sequence)).release(); break;
      }
    } catch (const PoolExhausted&) {
      result.exhausted.push_back(int(i));  // nothing changed; the plan goes on
    }
  }
  for (const PagedSequence& seq : seqs) result.sequences.push_back(snapshot(seq));
  for (int b = 0; b < pool.n_blocks(); ++b) result.ref_counts.push_back(pool.ref_count(b));
  result.free_blocks = pool.free_blocks();
  return result;
}

PagedForkRun run_paged_fork(const gpt2::Model& model, int n_blocks, const std::vector<int>& prompt,
                            const std::vector<std::vector<int>>& branches) {
  PagedForkRun run;
  run.pool = std::make_unique<BlockPool>(n_blocks, n_layers);
  PagedSequence root(*run.pool);
  run.prompt_logits = paged_prefill(model, root, prompt);
  for (const std::vector<int>& tokens : branches) {
    run.branches.push_back(root.fork());
    std::vector<float>& logits = run.logits.emplace_back();  // [n_steps * vocab]
    for (int token : tokens) {
      std::vector<float> step = paged_decode_step(model, run.branches.back(), token);
      logits.insert(logits.end(), step.begin(), step.end());
    }
  }
  root.release();
  return run;
}

PrefixRun run_prefix_trace(const gpt2::Model& model, int n_blocks,
                           const std::vector<std::vector<int>>& prompts) {
  BlockPool pool(n_blocks, n_layers);
  PrefixCache cache(pool);
  PrefixRun run;
  for (const std::vector<int>& prompt : prompts) {
    PagedSequence sequence = cache.lookup(prompt);
    const int cached = sequence.length();  // whole blocks served from the cache
    run.cached_tokens.push_back(cached);
    const int needed = (int(prompt.size()) + block_size - 1) / block_size - int(sequence.block_table().size());
    cache.make_room(needed);
    run.logits.push_back(paged_prefill(model, sequence, std::span<const int>(prompt).subspan(size_t(cached))));
    cache.insert(sequence, prompt);
    sequence.release();
  }
  run.entries = cache.entries();
  run.evicted = cache.evicted();
  for (int b = 0; b < pool.n_blocks(); ++b) run.ref_counts.push_back(pool.ref_count(b));
  run.free_blocks = pool.free_blocks();
  return run;
}

GenerateRun run_generate(const gpt2::Model& model, const std::vector<int>& prompt, int max_new_tokens,
                         const TokenSink& on_token) {
  GenerateRun run;
  run.generated = generate_greedy(model, run.cache, prompt, max_new_tokens, on_token);
  return run;
}

ContinuedRun run_generate_from(const gpt2::Model& model, const std::vector<int>& prefix,
                               const std::vector<std::vector<int>>& suffixes, int max_new_tokens) {
  ContinuedRun run;
  run.saved = save_prefix(model, prefix);
  for (const std::vector<int>& suffix : suffixes) {
    GenerateRun& c = run.continued.emplace_back();
    c.cache = run.saved.cache.clone();  // a deep copy: the saved prefix stays as it is
    c.generated = generate_greedy(model, c.cache, suffix, max_new_tokens);
  }
  return run;
}

GenerateRun run_speed(const gpt2::Model& model, int past, uint64_t past_seed,
                      const std::vector<int>& prompt, int max_new_tokens) {
  GenerateRun run;
  fill_past(run.cache, past, past_seed);
  run.generated = generate_greedy(model, run.cache, prompt, max_new_tokens);
  return run;
}

Q8Blocks run_q8_blocks(const std::vector<float>& values) {
  if (values.size() % q8_block != 0)
    throw std::invalid_argument("run_q8_blocks: " + std::to_string(values.size()) +
                                " values are not whole blocks of 32");
  Q8Blocks out;
  out.dequantized.resize(values.size());
  for (size_t b = 0; b < values.size() / q8_block; ++b) {
    const Q8Block block = quantize_q8_0(std::span<const float>(values).subspan(b * q8_block, q8_block));
    out.scales.push_back(block.scale);
    out.codes.insert(out.codes.end(), block.codes.begin(), block.codes.end());
    dequantize_q8_0(block, std::span<float>(out.dequantized).subspan(b * q8_block, q8_block));
  }
  return out;
}

Q8Run run_q8_decode(const gpt2::Model& model, const std::vector<int>& tokens) {
  Q8Run run;
  for (int token : tokens) {
    std::vector<float> step = decode_step_q8(model, run.cache, token);  // [vocab]
    run.logits.insert(run.logits.end(), step.begin(), step.end());
  }
  return run;
}

ChunkedResult run_serve_chunked(const gpt2::Model& model, int n_blocks, int budget,
                                const std::vector<Request>& requests) {
  return serve_chunked(model, n_blocks, budget, requests);
}

}  // namespace course
