// Reference solution for src/kvcache.cpp (stages cache-structure and multi-layer-cache).
#include "course/kvcache.hpp"

#include <stdexcept>
#include <string>

namespace course {

void KVCache::append(std::span<const float> k, std::span<const float> v) {
  if (k.size() != size_t(d_model) || v.size() != size_t(d_model))
    throw std::invalid_argument("KVCache::append takes 768 floats of K and 768 of V, got " +
                                std::to_string(k.size()) + " and " + std::to_string(v.size()));
  // One new row at the end of each [seq, 768] buffer: seq grows by exactly one.
  keys_.insert(keys_.end(), k.begin(), k.end());
  values_.insert(values_.end(), v.begin(), v.end());
  ++length_;
}

int KVCache::length() const { return length_; }

KVCache KVCache::clone() const {
  return *this;  // the vectors are copied element by element: nothing is shared
}

std::span<const float> KVCache::key(int head, int pos) const {
  // Row `pos` of the [seq, 768] buffer, then head `head`'s band of 64 within it.
  return std::span<const float>(keys_).subspan(size_t(pos) * d_model + size_t(head) * head_dim, head_dim);
}

std::span<const float> KVCache::value(int head, int pos) const {
  return std::span<const float>(values_).subspan(size_t(pos) * d_model + size_t(head) * head_dim, head_dim);
}

void KVCache::crop(int n) {
  if (n < 0 || n > length_)
    throw std::out_of_range("KVCache::crop(" + std::to_string(n) + ") on a cache of " + std::to_string(length_) +
                            " positions");
  // Rows n, n+1, ... go: the next append lands at row n, not after stale rows.
  keys_.resize(size_t(n) * d_model);
  values_.resize(size_t(n) * d_model);
  length_ = n;
}

ModelCache::ModelCache() {
  layers_.reserve(n_layers);
  for (int l = 0; l < n_layers; ++l) layers_.push_back(std::make_shared<KVCache>());  // twelve distinct caches
}

ModelCache ModelCache::clone() const {
  ModelCache copy;
  for (int l = 0; l < n_layers; ++l) copy.layers_[l] = std::make_shared<KVCache>(layers_[l]->clone());
  return copy;
}

void ModelCache::crop(int n) {
  // Check every layer before changing any, so that a bad n leaves the cache as it was.
  for (int l = 0; l < n_layers; ++l)
    if (n < 0 || n > layers_[l]->length())
      throw std::out_of_range("ModelCache::crop(" + std::to_string(n) + "): layer " + std::to_string(l) +
                              " holds " + std::to_string(layers_[l]->length()) + " positions");
  for (int l = 0; l < n_layers; ++l) layers_[l]->crop(n);
}

}  // namespace course
