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
  // TODO: add one position: k's 768 floats at the end of keys_, v's at the end of values_.
  (void)k;
  (void)v;
  not_implemented("KVCache::append (src/kvcache.cpp)");
}

int KVCache::length() const {
  // TODO: return the number of positions stored.
  not_implemented("KVCache::length (src/kvcache.cpp)");
}

KVCache KVCache::clone() const {
  // TODO: return a copy that shares nothing with *this.
  not_implemented("KVCache::clone (src/kvcache.cpp)");
}

std::span<const float> KVCache::key(int head, int pos) const {
  // TODO: the 64 floats of head `head` at position `pos`, found inside row `pos` of keys_.
  (void)head;
  (void)pos;
  not_implemented("KVCache::key (src/kvcache.cpp)");
}

std::span<const float> KVCache::value(int head, int pos) const {
  // TODO: as key(), from values_.
  (void)head;
  (void)pos;
  not_implemented("KVCache::value (src/kvcache.cpp)");
}

void KVCache::crop(int n) {
  // TODO: stage 6: keep positions 0 .. n-1 (throw std::out_of_range unless 0 <= n <= length):
  // shrink keys_ and values_ to n rows too, so the next append becomes position n.
  (void)n;
  not_implemented("KVCache::crop (src/kvcache.cpp)");
}

ModelCache::ModelCache() {
  // TODO: fill layers_ with n_layers (12) separate, empty KVCaches.
  not_implemented("ModelCache::ModelCache (src/kvcache.cpp)");
}

ModelCache ModelCache::clone() const {
  // TODO: a new ModelCache whose every layer is a clone() of this one's layer.
  not_implemented("ModelCache::clone (src/kvcache.cpp)");
}

void ModelCache::crop(int n) {
  // TODO: stage 6: check that every layer holds at least n positions (std::out_of_range
  // otherwise, before changing anything), then crop every layer to n.
  (void)n;
  not_implemented("ModelCache::crop (src/kvcache.cpp)");
}

}  // namespace course
