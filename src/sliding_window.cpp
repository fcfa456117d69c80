// Your windowed cache: stage 15 (sliding-window).
//
// The declarations, with the exact contract of each function, are in
// include/course/sliding_window.hpp; read it first. A WindowedLayer keeps the first `sink`
// positions for good and the last `window` ones; every older position is evicted as the
// next one arrives. Positions stay absolute (GPT-2's learned position embeddings), so the
// next token's position is total(), not length(). Attention is stage 3's attend_one over
// the rows a layer holds; a prefill must give the bits of decoding its tokens one at a time.
//
// Shapes: keys_ and values_ are [length(), d_model], held rows in position order;
// positions_ is [length()], the absolute position of each held row.
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/sliding_window.hpp"

#include "course/not_implemented.hpp"

namespace course {

WindowedLayer::WindowedLayer(int sink, int window) {
  // TODO: check the sizes (std::invalid_argument) and keep them.
  (void)sink;
  (void)window;
  not_implemented("WindowedLayer::WindowedLayer (src/sliding_window.cpp)");
}

void WindowedLayer::append(std::span<const float> k, std::span<const float> v) {
  // TODO: one row more at the end, at position total(); then, while more than sink + window
  // rows are held, the oldest row that is not a sink leaves.
  (void)k;
  (void)v;
  not_implemented("WindowedLayer::append (src/sliding_window.cpp)");
}

int WindowedLayer::length() const {
  // TODO: the rows held now.
  not_implemented("WindowedLayer::length (src/sliding_window.cpp)");
}

int WindowedLayer::total() const {
  // TODO: the positions appended so far, less those a crop removed.
  not_implemented("WindowedLayer::total (src/sliding_window.cpp)");
}

int WindowedLayer::position(int i) const {
  // TODO: the absolute position of held row i.
  (void)i;
  not_implemented("WindowedLayer::position (src/sliding_window.cpp)");
}

std::span<const float> WindowedLayer::key(int head, int i) const {
  // TODO: head `head`'s 64 floats of held row i (not of position i).
  (void)head;
  (void)i;
  not_implemented("WindowedLayer::key (src/sliding_window.cpp)");
}

std::span<const float> WindowedLayer::value(int head, int i) const {
  // TODO: as key(), from the values.
  (void)head;
  (void)i;
  not_implemented("WindowedLayer::value (src/sliding_window.cpp)");
}

void WindowedLayer::crop(int n) {
  // TODO: forget every held position >= n; total() becomes n. Evicted rows stay gone.
  (void)n;
  not_implemented("WindowedLayer::crop (src/sliding_window.cpp)");
}

int WindowedLayer::sink() const {
  // TODO: the sink given to the constructor.
  not_implemented("WindowedLayer::sink (src/sliding_window.cpp)");
}

int WindowedLayer::window() const {
  // TODO: the window given to the constructor.
  not_implemented("WindowedLayer::window (src/sliding_window.cpp)");
}

WindowedCache::WindowedCache(int sink, int window) {
  // TODO: twelve layers, each of its own.
  (void)sink;
  (void)window;
  not_implemented("WindowedCache::WindowedCache (src/sliding_window.cpp)");
}

WindowedCache WindowedCache::clone() const {
  // TODO: a cache of the same sizes whose every layer is a copy of this one's.
  not_implemented("WindowedCache::clone (src/sliding_window.cpp)");
}

void WindowedCache::crop(int n) {
  // TODO: every layer, or none when n is out of range for one of them.
  (void)n;
  not_implemented("WindowedCache::crop (src/sliding_window.cpp)");
}

std::vector<float> windowed_decode_step(const gpt2::Model& model, WindowedCache& cache, int token) {
  // x, q, k, v, attn:   [1, d_model]
  // returns:            [vocab]
  // TODO: stage 3's decode step at position total(), on a windowed cache.
  (void)model;
  (void)cache;
  (void)token;
  not_implemented("windowed_decode_step (src/sliding_window.cpp)");
}

std::vector<float> windowed_prefill(const gpt2::Model& model, WindowedCache& cache,
                                    std::span<const int> tokens) {
  // x, q, k, v, attn:   [n, d_model]
  // returns:            [vocab], the last row's
  // TODO: every row attends to what a decode step at its position would hold after its
  // own append.
  (void)model;
  (void)cache;
  (void)tokens;
  not_implemented("windowed_prefill (src/sliding_window.cpp)");
}

}  // namespace course
