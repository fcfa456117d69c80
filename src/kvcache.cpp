// Your KV cache: stages 1 (cache-structure), 2 (multi-layer-cache) and the crop of
// stage 6 (rollback).
//
// The class declarations are in include/course/kvcache.hpp; read them first. You write
// the member functions here. Storage is already chosen for you in the header:
//
//   keys_    [seq, n_heads * head_dim] = [seq, 768]   one row per position, rows in order
//   values_  [seq, 768]                                likewise
//   length_  seq, the number of positions stored
//
// while the view the rest of the course reads is the logical [n_heads, seq, head_dim] =
// [12, seq, 64]: key(h, p) is head h's 64 floats at position p. Converting between the
// two is the whole of stage 1. This file leaves out attention: it only stores and reads.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/kvcache.hpp"

#include "course/not_implemented.hpp"

namespace course {

void KVCache::append(std::span<const float> k, std::span<const float> v) {
  // TODO: add exactly one position at the end: k (768 floats) as its key, v as its value.
  (void)k;
  (void)v;
  not_implemented("KVCache::append (src/kvcache.cpp)");
}

int KVCache::length() const {
  // TODO: the number of positions stored (the seq of [12, seq, 64]).
  not_implemented("KVCache::length (src/kvcache.cpp)");
}

KVCache KVCache::clone() const {
  // TODO: a cache equal to this one, rows and length, that shares nothing with it.
  not_implemented("KVCache::clone (src/kvcache.cpp)");
}

std::span<const float> KVCache::key(int head, int pos) const {
  // TODO: head `head`'s 64 floats at position `pos`, a view into the stored rows (no copy).
  (void)head;
  (void)pos;
  not_implemented("KVCache::key (src/kvcache.cpp)");
}

std::span<const float> KVCache::value(int head, int pos) const {
  // TODO: as key(), for the values.
  (void)head;
  (void)pos;
  not_implemented("KVCache::value (src/kvcache.cpp)");
}

void KVCache::crop(int n) {
  // TODO: stage 6: afterwards positions 0 .. n-1 are kept as they were and nothing else is
  // (the next append is position n); std::out_of_range unless 0 <= n <= length().
  (void)n;
  not_implemented("KVCache::crop (src/kvcache.cpp)");
}

ModelCache::ModelCache() {
  // TODO: n_layers (12) empty caches, no two of them the same cache.
  not_implemented("ModelCache::ModelCache (src/kvcache.cpp)");
}

ModelCache ModelCache::clone() const {
  // TODO: a ModelCache equal to this one layer by layer that shares no layer with it.
  not_implemented("ModelCache::clone (src/kvcache.cpp)");
}

void ModelCache::crop(int n) {
  // TODO: stage 6: every layer cropped to n; a bad n for any layer throws std::out_of_range
  // before any layer changes.
  (void)n;
  not_implemented("ModelCache::crop (src/kvcache.cpp)");
}

}  // namespace course
