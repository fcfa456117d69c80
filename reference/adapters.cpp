// Reference solution for adapters/adapters.cpp.
#include "course/adapters.hpp"

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  std::vector<KVCache> caches;
  for (const CacheOp& op : plan) {
    switch (op.kind) {
      case CacheOp::Kind::create: caches.emplace_back(); break;
      case CacheOp::Kind::append: caches.at(op.cache).append(op.k, op.v); break;
      case CacheOp::Kind::clone: caches.push_back(caches.at(op.cache).clone()); break;
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

}  // namespace course
