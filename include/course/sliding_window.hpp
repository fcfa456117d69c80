// Stage 15 (sliding-window): a cache of bounded size, as StreamingLLM keeps it. A plain
// cache grows by one position per token, and attention reads all of it at every step.
// A windowed cache keeps two kinds of positions and evicts the rest:
//   - the sinks: the first `sink` positions ever appended, kept for good (models put a large
//     share of their attention on the first tokens whatever they say; evicting them is what
//     makes a plain sliding window fall apart);
//   - the window: the most recent `window` positions.
// Once more than sink + window positions have been appended, each append evicts the oldest
// position that is not a sink: its rows leave the cache for good.
//
// GPT-2 learned one embedding per absolute position (wpe) up to 1024, so a token keeps its
// absolute position however many rows are evicted before it: the total number of positions
// appended, never the number held, is where the next token goes, and the total stays
// below 1024. (Models with rotary positions can re-number the kept rows and stream on;
// GPT-2 cannot.)
//
// Attention over a windowed layer is attention over the rows it holds, in ascending
// position order (sinks first, then the window from oldest to newest): course::attend_one
// of stage 3 on the layer as a KVView. Both your code (src/sliding_window.cpp) and the
// reference implement this header; leave it as it is.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "course/decode.hpp"  // attend_one (stage 3), gpt2::Model
#include "course/kvcache.hpp"

namespace course {

// One layer's windowed cache.
class WindowedLayer : public KVView {
 public:
  // Throws std::invalid_argument unless sink >= 0, window >= 1 and sink + window <= 1024.
  WindowedLayer(int sink, int window);

  // Appends the next position, total() before the call, then evicts the oldest position that
  // is not a sink while more than sink + window are held. k and v are 768 floats each.
  void append(std::span<const float> k, std::span<const float> v);

  // Rows held: min(total(), sink + window) until a crop (below) makes it fewer.
  int length() const override;

  // Positions appended since the start, minus those a crop removed: the absolute position
  // of the next append.
  int total() const;

  // The absolute position of held row i, 0 <= i < length(); ascending in i.
  int position(int i) const;

  // Held row `i`'s 64 key (or value) floats of head `head`: the logical view
  // [n_heads, length(), head_dim] over the rows held, in position order.
  std::span<const float> key(int head, int i) const override;
  std::span<const float> value(int head, int i) const override;

  // Rollback: forgets every held position >= n; total() becomes n. Rows evicted earlier do
  // not come back: after a crop across the window's start, the window holds fewer than
  // `window` rows until appends refill it, so the next steps differ from a run that
  // stopped at n. Throws std::out_of_range, changing nothing, unless 0 <= n <= total().
  void crop(int n);

  int sink() const;
  int window() const;

 private:
  int sink_ = 0;
  int window_ = 1;
  int total_ = 0;
  std::vector<int> positions_;  // [length()]: the absolute position of each held row
  std::vector<float> keys_;     // [length(), d_model], rows in position order
  std::vector<float> values_;   // the same for values
};

// Twelve windowed layers of the same sink and window.
class WindowedCache {
 public:
  WindowedCache(int sink, int window);

  WindowedLayer& layer(int l) { return *layers_.at(size_t(l)); }
  const WindowedLayer& layer(int l) const { return *layers_.at(size_t(l)); }

  // A deep copy: nothing is shared with *this.
  WindowedCache clone() const;

  // crop(n) on every layer. Throws std::out_of_range, changing nothing, unless
  // 0 <= n <= total() of every layer.
  void crop(int n);

 private:
  std::vector<std::unique_ptr<WindowedLayer>> layers_;  // [n_layers]
};

// One decode step on a windowed cache: `token` goes in at absolute position
// p = cache.layer(0).total(). For every layer: q, k, v (model.qkv), append k and v (which
// may evict a row), attend_one over the rows the layer now holds, model.finish_block.
// Returns model.logits of the token: [vocab]. Throws std::length_error, changing nothing,
// when p would be 1024 or more (GPT-2 has no position embedding beyond 1023).
std::vector<float> windowed_decode_step(const gpt2::Model& model, WindowedCache& cache, int token);

// The prompt at once on a windowed cache: rows continue at cache.layer(0).total(). Each
// row attends exactly to what it would hold had the tokens been decoded one at a time
// with windowed_decode_step: the sinks and the last `window` positions up to and including
// its own. The logits of the last row ([vocab]) and the cache afterwards (held rows, their
// positions, total) are those of decoding the tokens one at a time, bit for bit. `tokens`
// must not be empty; throws std::length_error, changing nothing, when the last position
// would be 1024 or more.
std::vector<float> windowed_prefill(const gpt2::Model& model, WindowedCache& cache,
                                    std::span<const int> tokens);

}  // namespace course
