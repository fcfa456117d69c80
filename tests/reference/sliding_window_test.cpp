// The windowed cache of the coming stage sliding-window (course/sliding_window.hpp), on
// the reference: what it holds after appends, crops and clones; that a prefill gives the
// bits of decoding the same tokens one at a time; that with nothing evicted it is the plain
// cache of stages 3 and 4; and that its decode equals an attention written out here from
// the definition (the sinks and the last `window` positions of a cache that keeps every row).
#include "course/sliding_window.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "synthetic_file.hpp"

namespace {

using course::d_model;
using course::n_layers;
using course::WindowedCache;
using course::WindowedLayer;

const gpt2::Model& model() {
  static const gpt2::Model m = [] {
    gpt2::Model loaded = gpt2::map_synthetic_file(KVCOURSE_WEIGHTS_FILE, 2026);
    loaded.set_threads(1);
    return loaded;
  }();
  return m;
}

// "The quick brown fox jumps over the lazy dog. The quick brown fox jumps" and more: 20 ids.
const std::vector<int> kTokens = {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13,
                                  383, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<int> held_positions(const WindowedLayer& layer) {
  std::vector<int> out;
  for (int i = 0; i < layer.length(); ++i) out.push_back(layer.position(i));
  return out;
}

// Every layer holds the same positions with the same bits.
void expect_same_cache(const WindowedCache& a, const WindowedCache& b) {
  for (int l = 0; l < n_layers; ++l) {
    const WindowedLayer &x = a.layer(l), &y = b.layer(l);
    ASSERT_EQ(x.total(), y.total()) << "layer " << l;
    ASSERT_EQ(held_positions(x), held_positions(y)) << "layer " << l;
    for (int i = 0; i < x.length(); ++i)
      for (int h = 0; h < course::n_heads; ++h) {
        ASSERT_EQ(std::memcmp(x.key(h, i).data(), y.key(h, i).data(), 64 * sizeof(float)), 0)
            << l << " " << i;
        ASSERT_EQ(std::memcmp(x.value(h, i).data(), y.value(h, i).data(), 64 * sizeof(float)), 0)
            << l << " " << i;
      }
  }
}

std::vector<float> row(float fill) { return std::vector<float>(size_t(d_model), fill); }

TEST(sliding_window, a_layer_keeps_the_sinks_and_the_last_window_positions) {
  WindowedLayer layer(2, 3);
  for (int p = 0; p < 9; ++p) layer.append(row(float(p)), row(float(-p)));
  EXPECT_EQ(layer.total(), 9);
  EXPECT_EQ(held_positions(layer), (std::vector<int>{0, 1, 6, 7, 8}));
  EXPECT_EQ(layer.key(5, 2)[0], 6.0f);
  EXPECT_EQ(layer.value(11, 4)[63], -8.0f);

  WindowedLayer plain(0, 3);  // no sinks: a plain sliding window
  for (int p = 0; p < 5; ++p) plain.append(row(float(p)), row(0));
  EXPECT_EQ(held_positions(plain), (std::vector<int>{2, 3, 4}));

  EXPECT_THROW(WindowedLayer(-1, 3), std::invalid_argument);
  EXPECT_THROW(WindowedLayer(2, 0), std::invalid_argument);
  EXPECT_THROW(WindowedLayer(24, 1001), std::invalid_argument);
  EXPECT_THROW(layer.append(std::vector<float>(767), row(0)), std::invalid_argument);
}

TEST(sliding_window, a_crop_across_the_window_start_leaves_the_window_short) {
  WindowedLayer layer(2, 3);
  for (int p = 0; p < 9; ++p) layer.append(row(float(p)), row(0));
  layer.crop(7);  // positions 7 and 8 go; 3, 4 and 5 were evicted and stay so
  EXPECT_EQ(layer.total(), 7);
  EXPECT_EQ(held_positions(layer), (std::vector<int>{0, 1, 6}));
  layer.append(row(7.5f), row(0));
  layer.append(row(8.5f), row(0));
  EXPECT_EQ(held_positions(layer), (std::vector<int>{0, 1, 6, 7, 8}));
  EXPECT_EQ(layer.key(0, 4)[0], 8.5f);
  layer.append(row(9.5f), row(0));  // full again: 6 goes
  EXPECT_EQ(held_positions(layer), (std::vector<int>{0, 1, 7, 8, 9}));

  layer.crop(1);  // into the sinks
  EXPECT_EQ(held_positions(layer), (std::vector<int>{0}));
  EXPECT_THROW(layer.crop(2), std::out_of_range);
  EXPECT_THROW(layer.crop(-1), std::out_of_range);
  EXPECT_EQ(layer.total(), 1);
}

TEST(sliding_window, a_clone_shares_nothing_and_a_model_crop_is_all_or_nothing) {
  WindowedCache cache(1, 2);
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < n_layers; ++l) cache.layer(l).append(row(float(p)), row(0));
  WindowedCache copy = cache.clone();
  copy.crop(2);
  for (int p = 2; p < 6; ++p) copy.layer(3).append(row(100), row(0));
  EXPECT_EQ(held_positions(cache.layer(3)), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(cache.layer(3).key(0, 2)[0], 3.0f);
  cache.layer(5).crop(1);
  EXPECT_THROW(cache.crop(2), std::out_of_range);  // layer 5's total is 1
  EXPECT_EQ(cache.layer(0).total(), 4);
}

// Nothing evicted: the windowed cache is stage 3's and stage 4's cache, bit for bit.
TEST(sliding_window, with_nothing_evicted_it_is_the_plain_cache) {
  const std::vector<int> prompt(kTokens.begin(), kTokens.begin() + 6);
  course::ModelCache plain;
  WindowedCache windowed(4, 16);
  EXPECT_TRUE(same_bits(course::prefill(model(), plain, prompt),
                        course::windowed_prefill(model(), windowed, prompt)));
  for (int token : {318, 257}) {
    EXPECT_TRUE(same_bits(course::decode_step(model(), plain, token),
                          course::windowed_decode_step(model(), windowed, token)));
  }
  EXPECT_EQ(windowed.layer(0).length(), plain.layer(0).length());
}

// A prompt longer than the sinks and the window, at once and in two pieces, against the same
// tokens decoded one at a time.
TEST(sliding_window, a_prefill_gives_the_bits_of_decoding_one_token_at_a_time) {
  for (auto [sink, window] : {std::pair{2, 5}, std::pair{0, 7}, std::pair{3, 1}}) {
    WindowedCache stepped(sink, window), whole(sink, window), pieces(sink, window);
    std::vector<float> last;
    for (int token : kTokens) last = course::windowed_decode_step(model(), stepped, token);
    EXPECT_TRUE(same_bits(course::windowed_prefill(model(), whole, kTokens), last))
        << sink << " " << window;
    expect_same_cache(whole, stepped);
    const std::span<const int> all(kTokens);
    course::windowed_prefill(model(), pieces, all.first(7));
    EXPECT_TRUE(same_bits(course::windowed_prefill(model(), pieces, all.subspan(7)), last))
        << sink << " " << window;
    expect_same_cache(pieces, stepped);
  }
}

// The definition, written out: a cache that keeps every row, and attention at position p
// over the sinks and positions p - window + 1 .. p of it.
class EveryRow : public course::KVView {
 public:
  EveryRow(const course::KVCache& all, int sink, int window, int p) : all_(all) {
    for (int j = 0; j <= p; ++j)
      if (j < sink || j > p - window) rows_.push_back(j);
  }
  int length() const override { return int(rows_.size()); }
  std::span<const float> key(int h, int i) const override {
    return all_.key(h, rows_.at(size_t(i)));
  }
  std::span<const float> value(int h, int i) const override {
    return all_.value(h, rows_.at(size_t(i)));
  }

 private:
  const course::KVCache& all_;
  std::vector<int> rows_;
};

TEST(sliding_window, a_decode_step_attends_to_the_sinks_and_the_window_of_every_row) {
  const int sink = 2, window = 4;
  course::ModelCache every;  // every row, never evicted
  WindowedCache windowed(sink, window);
  std::vector<float> x(d_model), q(d_model), k(d_model), v(d_model), attn(d_model);
  std::vector<float> logits(size_t(model().config().vocab));
  for (int p = 0; p < int(kTokens.size()); ++p) {
    model().embed(&kTokens[size_t(p)], &p, 1, x.data());
    for (int l = 0; l < n_layers; ++l) {
      model().qkv(l, x.data(), 1, q.data(), k.data(), v.data());
      every.layer(l).append(k, v);
      course::attend_one(q, EveryRow(every.layer(l), sink, window, p), attn);
      model().finish_block(l, attn.data(), 1, x.data());
    }
    model().logits(x.data(), 1, logits.data());
    ASSERT_TRUE(
        same_bits(course::windowed_decode_step(model(), windowed, kTokens[size_t(p)]), logits))
        << p;
  }
}

// Positions stay absolute: the last one is 1023, whatever the cache holds.
TEST(sliding_window, positions_end_at_1023) {
  WindowedCache cache(1, 2);
  const std::vector<float> zero = row(0.0f);
  for (int p = 0; p < 1022; ++p)
    for (int l = 0; l < n_layers; ++l) cache.layer(l).append(zero, zero);
  EXPECT_THROW(course::windowed_prefill(model(), cache, std::vector<int>{464, 2068, 7586}),
               std::length_error);
  EXPECT_EQ(cache.layer(0).total(), 1022);
  course::windowed_prefill(model(), cache, std::vector<int>{464});
  course::windowed_decode_step(model(), cache, 2068);  // position 1023
  EXPECT_THROW(course::windowed_decode_step(model(), cache, 7586), std::length_error);
  EXPECT_EQ(cache.layer(0).total(), 1024);
  EXPECT_EQ(held_positions(cache.layer(11)), (std::vector<int>{0, 1022, 1023}));
}

}  // namespace
