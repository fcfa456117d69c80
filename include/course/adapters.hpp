// The adapters: one function per kind of graded case. The grader's runner decodes a
// fixture's input, calls the adapter, and sends what it returns back to the grader. You
// write them in adapters/adapters.cpp (the reference has its own copy).
#pragma once

#include <array>
#include <vector>

#include "course/decode.hpp"
#include "course/kvcache.hpp"

namespace course {

// ---- Stage cache-structure ------------------------------------------------------------

// One step of a plan run on a list of caches (numbered in order of creation, from 0).
struct CacheOp {
  enum class Kind { create, append, clone };
  Kind kind = Kind::create;
  int cache = 0;         // append: the cache to append to; clone: the cache to copy
  std::vector<float> k;  // append only: [d_model] = [768]
  std::vector<float> v;  // append only: [d_model] = [768]
};

// What the grader reads back from one cache.
struct CacheSnapshot {
  std::array<int, 3> shape{};  // [n_heads, length, head_dim] = [12, length, 64]
  std::vector<float> keys;     // [12, length, 64], read through KVCache::key(head, pos)
  std::vector<float> values;   // [12, length, 64], read through KVCache::value(head, pos)
};

// Runs the plan: `create` adds a new empty cache, `append` appends (k, v) to a cache,
// `clone` adds a new cache that is cache.clone(). Returns one snapshot per cache, in
// order of creation, taken after the whole plan has run.
std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan);

// ---- Stage multi-layer-cache ----------------------------------------------------------

using ShapeRow = std::array<int, 3>;  // [n_heads, length, head_dim]

// A fresh ModelCache; for each entry of `appends`, one token (768 floats of K and of V,
// any values) appended to that layer. Returns 12 rows, layer 0 first: [12, length, 64].
std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends);

struct CloneShapes {
  std::vector<ShapeRow> original;  // [n_layers] rows
  std::vector<ShapeRow> clone;     // [n_layers] rows
};

// A fresh ModelCache gets `before` (layer indices, one append each); then
// copy = cache.clone(); then `after_original` is appended to the original and
// `after_clone` to the copy. Returns both caches' 12 shape rows.
CloneShapes run_model_cache_clone(const std::vector<int>& before,
                                  const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone);

// ---- Stages one-token, prefill, prefix-reuse -------------------------------------------
// The runner builds the model once (synthetic GPT-2 small weights named by the fixtures)
// and reads the caches you return through KVCache::length(), key() and value(). It also
// counts the rows each call puts through the model (gpt2::Model::work): a cache is there
// so that every position goes through each layer once.

// Logits and the cache they were computed with.
struct CacheRun {
  std::vector<float> logits;  // one-token: [n_steps, vocab], step by step;
                              // prefill: [n_chunks, vocab], each chunk's last row
  ModelCache cache;           // after the last step or chunk
};

// Stage one-token: a fresh ModelCache, then decode_step for each token in order.
CacheRun run_decode(const gpt2::Model& model, const std::vector<int>& tokens);

// Stage prefill: a fresh ModelCache, then one prefill per chunk of tokens, in order: the
// second chunk continues after the first one's positions, and so on.
CacheRun run_prefill(const gpt2::Model& model, const std::vector<std::vector<int>>& chunks);

struct ReuseRun {
  SavedPrefix saved;                              // after every suffix has run
  std::vector<SavedPrefix> continued;             // [n_suffixes]: continue_from's results, in order
  std::vector<std::vector<ShapeRow>> saved_rows;  // [n_suffixes][n_layers]: the saved cache's
                                                  // shape rows right after each suffix
};

// Stage prefix-reuse: save_prefix(prefix) once; then for each suffix in order,
// continue_from(saved, suffix), keeping its result and the saved cache's 12 shape rows.
ReuseRun run_prefix_reuse(const gpt2::Model& model, const std::vector<int>& prefix,
                          const std::vector<std::vector<int>>& suffixes);

}  // namespace course
