// Reference solution for src/sliding_window.cpp (stage sliding-window).
#include "course/sliding_window.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops.hpp"

namespace course {

namespace {

constexpr int kMaxPositions = 1024;  // GPT-2's wpe rows

// Attention reads a chosen set of rows: a prefill row sees the rows held before the call
// and the prompt's rows up to its own, less those its own step would have evicted.
class RowsView : public KVView {
 public:
  void clear() {
    keys_.clear();
    values_.clear();
  }
  void add(const float* k, const float* v) {
    keys_.push_back(k);
    values_.push_back(v);
  }
  int length() const override { return int(keys_.size()); }
  std::span<const float> key(int head, int i) const override {
    return {keys_.at(size_t(i)) + head * head_dim, size_t(head_dim)};
  }
  std::span<const float> value(int head, int i) const override {
    return {values_.at(size_t(i)) + head * head_dim, size_t(head_dim)};
  }

 private:
  std::vector<const float*> keys_;    // [length]: row i's 768 key floats
  std::vector<const float*> values_;  // the same for values
};

void check_row(std::span<const float> k, std::span<const float> v) {
  if (k.size() != size_t(d_model) || v.size() != size_t(d_model))
    throw std::invalid_argument("WindowedLayer::append: k and v hold 768 floats each, not " +
                                std::to_string(k.size()) + " and " + std::to_string(v.size()));
}

void check_token(const gpt2::Model& model, int token) {
  if (token < 0 || token >= model.config().vocab)
    throw std::invalid_argument("token id " + std::to_string(token) + " is outside 0 .. " +
                                std::to_string(model.config().vocab - 1));
}

void check_room(int first, int n) {
  if (first + n > kMaxPositions)
    throw std::length_error("positions " + std::to_string(first) + " .. " +
                            std::to_string(first + n - 1) +
                            " do not fit: GPT-2 has position embeddings for 0 .. 1023 only");
}

}  // namespace

WindowedLayer::WindowedLayer(int sink, int window) : sink_(sink), window_(window) {
  if (sink < 0 || window < 1 || sink + window > kMaxPositions)
    throw std::invalid_argument(
        "a windowed cache needs sink >= 0, window >= 1 and sink + window <= 1024; got sink " +
        std::to_string(sink) + ", window " + std::to_string(window));
}

void WindowedLayer::append(std::span<const float> k, std::span<const float> v) {
  check_row(k, v);
  keys_.insert(keys_.end(), k.begin(), k.end());
  values_.insert(values_.end(), v.begin(), v.end());
  positions_.push_back(total_++);
  if (length() > sink_ + window_) {
    // The oldest row that is not a sink is held row `sink_`: rows are in position order
    // and the first sink_ rows held are positions 0 .. sink_-1.
    const auto row = std::ptrdiff_t(sink_) * d_model;
    keys_.erase(keys_.begin() + row, keys_.begin() + row + d_model);
    values_.erase(values_.begin() + row, values_.begin() + row + d_model);
    positions_.erase(positions_.begin() + sink_);
  }
}

int WindowedLayer::length() const { return int(positions_.size()); }

int WindowedLayer::total() const { return total_; }

int WindowedLayer::position(int i) const { return positions_.at(size_t(i)); }

std::span<const float> WindowedLayer::key(int head, int i) const {
  if (head < 0 || head >= n_heads || i < 0 || i >= length())
    throw std::out_of_range("WindowedLayer::key");
  return {keys_.data() + size_t(i) * d_model + size_t(head) * head_dim, size_t(head_dim)};
}

std::span<const float> WindowedLayer::value(int head, int i) const {
  if (head < 0 || head >= n_heads || i < 0 || i >= length())
    throw std::out_of_range("WindowedLayer::value");
  return {values_.data() + size_t(i) * d_model + size_t(head) * head_dim, size_t(head_dim)};
}

void WindowedLayer::crop(int n) {
  if (n < 0 || n > total_)
    throw std::out_of_range("crop(" + std::to_string(n) + ") on a windowed cache of total " +
                            std::to_string(total_));
  // Held rows are in position order: keep those below n.
  const auto keep =
      size_t(std::lower_bound(positions_.begin(), positions_.end(), n) - positions_.begin());
  positions_.resize(keep);
  keys_.resize(keep * d_model);
  values_.resize(keep * d_model);
  total_ = n;
}

int WindowedLayer::sink() const { return sink_; }

int WindowedLayer::window() const { return window_; }

WindowedCache::WindowedCache(int sink, int window) {
  for (int l = 0; l < n_layers; ++l)
    layers_.push_back(std::make_unique<WindowedLayer>(sink, window));
}

WindowedCache WindowedCache::clone() const {
  WindowedCache copy(layers_.front()->sink(), layers_.front()->window());
  for (int l = 0; l < n_layers; ++l) *copy.layers_[size_t(l)] = *layers_[size_t(l)];
  return copy;
}

void WindowedCache::crop(int n) {
  for (const auto& layer : layers_)
    if (n < 0 || n > layer->total())
      throw std::out_of_range("crop(" + std::to_string(n) + ") on a windowed cache of total " +
                              std::to_string(layer->total()));
  for (const auto& layer : layers_) layer->crop(n);
}

std::vector<float> windowed_decode_step(const gpt2::Model& model, WindowedCache& cache, int token) {
  const int pos = cache.layer(0).total();  // the new token's absolute position
  check_room(pos, 1);
  check_token(model, token);
  std::vector<float> x(d_model);                          // [1, d_model] residual stream
  std::vector<float> q(d_model), k(d_model), v(d_model);  // [1, d_model] each
  std::vector<float> attn(d_model);                       // [1, d_model]
  model.embed(&token, &pos, 1, x.data());
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), 1, q.data(), k.data(), v.data());
    cache.layer(l).append(k, v);  // may evict the oldest row that is not a sink
    attend_one(q, cache.layer(l), attn);
    model.finish_block(l, attn.data(), 1, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab]
  model.logits(x.data(), 1, logits.data());
  return logits;
}

std::vector<float> windowed_prefill(const gpt2::Model& model, WindowedCache& cache,
                                    std::span<const int> tokens) {
  if (tokens.empty()) throw std::invalid_argument("windowed_prefill: no tokens");
  const int n = int(tokens.size());
  const int first = cache.layer(0).total();  // position of row 0
  check_room(first, n);
  std::vector<int> positions(static_cast<size_t>(n));  // [n]
  for (int i = 0; i < n; ++i) {
    check_token(model, tokens[size_t(i)]);
    positions[size_t(i)] = first + i;
  }
  const int sink = cache.layer(0).sink(), window = cache.layer(0).window();
  const size_t rows = size_t(n) * d_model;
  std::vector<float> x(rows);                    // [n, d_model] residual stream
  std::vector<float> q(rows), k(rows), v(rows);  // [n, d_model] each
  std::vector<float> attn(rows);                 // [n, d_model]
  model.embed(tokens.data(), positions.data(), n, x.data());
  RowsView seen;
  for (int l = 0; l < n_layers; ++l) {
    WindowedLayer& layer = cache.layer(l);
    model.qkv(l, x.data(), n, q.data(), k.data(), v.data());
    // Row r (position p = first + r) sees what a decode step at p would hold after its
    // append: the sinks and positions p - window + 1 .. p, in position order; first the
    // rows held before the call, then the prompt's own.
    for (int r = 0; r < n; ++r) {
      const int p = first + r;
      const auto visible = [&](int pos) { return pos < sink || pos > p - window; };
      seen.clear();
      for (int i = 0; i < layer.length(); ++i)
        if (visible(layer.position(i))) seen.add(layer.key(0, i).data(), layer.value(0, i).data());
      for (int j = 0; j <= r; ++j)
        if (visible(first + j))
          seen.add(k.data() + size_t(j) * d_model, v.data() + size_t(j) * d_model);
      attend_one(std::span<const float>(q).subspan(size_t(r) * d_model, d_model), seen,
                 std::span<float>(attn).subspan(size_t(r) * d_model, d_model));
    }
    for (int r = 0; r < n; ++r)
      layer.append(std::span<const float>(k).subspan(size_t(r) * d_model, d_model),
                   std::span<const float>(v).subspan(size_t(r) * d_model, d_model));
    model.finish_block(l, attn.data(), n, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab] of the last row
  model.logits(x.data() + size_t(n - 1) * d_model, 1, logits.data());
  return logits;
}

}  // namespace course
