// The KV cache the course builds: one KVCache per attention layer, twelve of them in a
// ModelCache. This header is the interface that both your code (src/kvcache.cpp) and the
// reference implement; the grader's runner is compiled against it, so leave it as it is.
//
// Shapes: a cache holds, for each of its `length()` positions, one key and one value of
// d_model = n_heads * head_dim = 12 * 64 = 768 floats. Its logical shape is
// [n_heads, seq, head_dim] = [12, seq, 64]: head h at position p is 64 floats.
#pragma once

#include <memory>
#include <span>
#include <vector>

namespace course {

inline constexpr int n_layers = 12;
inline constexpr int n_heads = 12;
inline constexpr int head_dim = 64;
inline constexpr int d_model = n_heads * head_dim;  // 768

// What attention reads from one layer's cache: how many positions it holds and the logical
// [n_heads, seq, head_dim] view of its keys and values. KVCache is one; stage 7's paged
// layer (course/paged.hpp) is another, so one attention function serves both.
class KVView {
 public:
  virtual ~KVView() = default;

  // Number of positions stored: the `seq` of the logical shape [12, seq, 64].
  virtual int length() const = 0;

  // Head `head`'s 64 key (or value) floats at position `pos`, for 0 <= head < 12 and
  // 0 <= pos < length().
  virtual std::span<const float> key(int head, int pos) const = 0;
  virtual std::span<const float> value(int head, int pos) const = 0;
};

class KVCache : public KVView {
 public:
  // Adds exactly one position. k and v are one token's key and value: 768 floats each,
  // head h in k[h*64 .. h*64+63].
  void append(std::span<const float> k, std::span<const float> v);

  // Number of positions stored: the `seq` of the logical shape [12, seq, 64].
  int length() const override;

  // A deep, independent copy: appending to one never changes the other.
  KVCache clone() const;

  // The logical [n_heads, seq, head_dim] view: head `head`'s 64 key (or value) floats at
  // position `pos`, for 0 <= head < 12 and 0 <= pos < length().
  std::span<const float> key(int head, int pos) const override;
  std::span<const float> value(int head, int pos) const override;

  // Stage 6 (rollback): keeps the first n positions and forgets the rest, as if they had
  // never been appended; the next append is position n. Throws std::out_of_range unless
  // 0 <= n <= length().
  void crop(int n);

 private:
  // Storage: one row of 768 floats per position, rows in position order:
  // keys_ is [seq, n_heads * head_dim], values_ likewise.
  std::vector<float> keys_;
  std::vector<float> values_;
  int length_ = 0;
};

// One KVCache per layer. Layers are held by pointer, so whether two ModelCaches (or two
// layers) share a KVCache is up to the code you write in src/kvcache.cpp.
class ModelCache {
 public:
  // Twelve fresh, empty, independent layers.
  ModelCache();

  KVCache& layer(int l) { return *layers_.at(l); }
  const KVCache& layer(int l) const { return *layers_.at(l); }

  // A deep copy: every layer is cloned, nothing is shared with *this.
  ModelCache clone() const;

  // Stage 6 (rollback): crop(n) on every layer. Throws std::out_of_range, changing
  // nothing, unless 0 <= n <= the length of every layer.
  void crop(int n);

 private:
  std::vector<std::shared_ptr<KVCache>> layers_;  // [n_layers]
};

}  // namespace course
