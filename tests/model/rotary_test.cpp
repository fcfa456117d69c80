// Rotary positions (rotary.hpp): the cos/sin table against long double libm, the rotation's
// exact arithmetic, why a rotated key cannot be moved by rotating it again, RotaryModel's
// forward against the rotary cached loop, and forward_streaming (positions from the cache).
#include "rotary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model_test_helpers.hpp"
#include "ops.hpp"
#include "synthetic.hpp"
#include "variants.hpp"

namespace {

using model_test::bits;
using model_test::same_bits;

gpt2::Variant rotary() { return gpt2::Variant::parse("rotary", 1); }

TEST(rotary, frequencies_are_the_nearest_floats_to_the_powers_of_10000) {
  const gpt2::RotaryTable t(64, 1024);
  EXPECT_EQ(t.inv_freq(0), 1.0f);
  for (int i = 0; i < 32; ++i) {
    const float want =
        static_cast<float>(std::pow(10000.0L, -static_cast<long double>(2 * i) / 64));
    EXPECT_EQ(bits(t.inv_freq(i)), bits(want)) << "pair " << i;
  }
}

// The course's sin and cos (plain double arithmetic, no libm) against libm's long double
// ones, rounded to float, for every entry of GPT-2 small's table.
TEST(rotary, cos_and_sin_are_the_nearest_floats_for_every_entry) {
  const gpt2::RotaryTable t(64, 1024);
  int differ = 0;
  for (int p = 0; p < 1024; ++p) {
    for (int i = 0; i < 32; ++i) {
      const long double angle = static_cast<long double>(p) * t.inv_freq(i);
      differ += bits(t.cos(p, i)) != bits(static_cast<float>(std::cos(angle)));
      differ += bits(t.sin(p, i)) != bits(static_cast<float>(std::sin(angle)));
    }
  }
  EXPECT_EQ(differ, 0) << "of 65536 values";
  EXPECT_EQ(t.cos(0, 5), 1.0f);
  EXPECT_EQ(bits(t.sin(0, 5)), 0u);
}

// Every bit of the table: the fixtures of the rotary stages rest on it, so a change of
// the routine (or a compiler that evaluated it otherwise) must be seen here.
TEST(rotary, the_table_is_these_bits) {
  const gpt2::RotaryTable t(64, 1024);
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](float f) {
    h ^= bits(f);
    h *= 0x100000001b3ull;
  };
  for (int i = 0; i < 32; ++i) mix(t.inv_freq(i));
  for (int p = 0; p < 1024; ++p) {
    for (int i = 0; i < 32; ++i) {
      mix(t.cos(p, i));
      mix(t.sin(p, i));
    }
  }
  EXPECT_EQ(h, 0x4b3688c29fd7d043ull) << std::hex << h;
}

TEST(rotary, rotate_is_four_products_and_two_sums_per_pair) {
  const gpt2::RotaryTable t(64, 1024);
  std::vector<float> x(64), got(64);
  for (int d = 0; d < 64; ++d) x[d] = 0.37f * static_cast<float>(d % 13) - 1.9f + 0.001f * d;
  for (int p : {0, 1, 7, 100, 1023}) {
    t.rotate(x.data(), p, got.data());
    for (int i = 0; i < 32; ++i) {
      const float c = t.cos(p, i), s = t.sin(p, i), x0 = x[2 * i], x1 = x[2 * i + 1];
      const float a = x0 * c, b = x1 * s, e = x0 * s, f = x1 * c;
      EXPECT_EQ(bits(got[2 * i]), bits(a - b)) << "position " << p << ", pair " << i;
      EXPECT_EQ(bits(got[2 * i + 1]), bits(e + f)) << "position " << p << ", pair " << i;
    }
    std::vector<float> in_place = x;
    t.rotate(in_place.data(), p);
    EXPECT_TRUE(same_bits(in_place, got, 64)) << "in place, position " << p;
  }
  t.rotate(x.data(), 0, got.data());
  EXPECT_TRUE(same_bits(got, x, 64)) << "position 0 changes nothing";
  EXPECT_THROW(t.rotate(x.data(), 1024), gpt2::ModelError);
  EXPECT_THROW(t.rotate(x.data(), -1), gpt2::ModelError);
  EXPECT_THROW(gpt2::RotaryTable(63, 10), gpt2::ModelError);
  EXPECT_THROW(gpt2::RotaryTable(64, 0), gpt2::ModelError);
}

// The lesson's point: in exact arithmetic rotating by p, then by d, is rotating by p + d;
// in floats it is not, so a key cached after rotation cannot be moved to another position
// by rotating it again: it must be cached unrotated (or recomputed) and rotated once.
TEST(rotary, rotating_a_rotated_key_again_is_not_rotating_the_raw_key) {
  const gpt2::RotaryTable t(64, 1024);
  // The plainest key: (1, 0) in pair 0 (frequency 1). R(p) (1, 0) = (cos p, sin p) exactly;
  // R(d) of that is cos p cos d - sin p sin d, where the table holds cos(p + d). Moved
  // from position 1 to 2, both floats of the pair come out one or two ulps off the table's
  // cos 2 = -0.416146845f and sin 2 = 0.909297407f (DETERMINISM.md, "Rotary positions").
  std::vector<float> raw(64, 0.0f), at_p(64), moved(64), direct(64);
  raw[0] = 1.0f;
  t.rotate(raw.data(), 1, at_p.data());
  EXPECT_EQ(bits(at_p[0]), bits(t.cos(1, 0)));
  EXPECT_EQ(bits(at_p[1]), bits(t.sin(1, 0)));
  t.rotate(at_p.data(), 1, moved.data());
  t.rotate(raw.data(), 2, direct.data());
  EXPECT_EQ(direct[0], -0.416146845f);
  EXPECT_EQ(direct[1], 0.909297407f);
  EXPECT_EQ(moved[0], -0.416146815f);
  EXPECT_EQ(moved[1], 0.909297347f);
  // Over positions 1 .. 11 moved by 1 .. 11, most moves of this key miss.
  int missed = 0;
  for (int p = 1; p < 12; ++p) {
    for (int d = 1; d < 12; ++d) {
      t.rotate(raw.data(), p, at_p.data());
      t.rotate(at_p.data(), d, moved.data());
      t.rotate(raw.data(), p + d, direct.data());
      missed += bits(moved[0]) != bits(direct[0]) || bits(moved[1]) != bits(direct[1]);
    }
  }
  EXPECT_EQ(missed, 91) << "of 121";
  // A key of the model (GPT-2 small's weights, layer 0, head 0): most of its 64 floats.
  const gpt2::RotaryModel m(model_test::gpt2_small_model());
  const int token = 464;
  std::vector<float> x(768), q(768), k(768), v(768);
  m.embed(&token, 1, x.data());
  m.qkv(0, x.data(), 1, q.data(), k.data(), v.data());
  int differ = 0;
  for (int p : {1, 10, 100}) {
    for (int d : {1, 3, 50}) {
      m.table().rotate(k.data(), p, at_p.data());
      m.table().rotate(at_p.data(), d, moved.data());
      m.table().rotate(k.data(), p + d, direct.data());
      for (int i = 0; i < 64; ++i) differ += bits(moved[i]) != bits(direct[i]);
    }
  }
  EXPECT_GT(differ, 9 * 64 / 4) << "of " << 9 * 64;
}

TEST(rotary, embedding_is_the_token_row_without_a_position) {
  const gpt2::Config c = model_test::variant_config();
  const gpt2::Model base = gpt2::Model::synthetic(4, c);
  const gpt2::RotaryModel m(base);
  const std::vector<float> wte = gpt2::synthetic_tensor(4, c, "wte.weight");
  const std::vector<int> tokens = {7, 299, 0};
  std::vector<float> x(3 * 256);
  m.embed(tokens.data(), 3, x.data());
  for (int r = 0; r < 3; ++r) {
    const std::vector<float> row(wte.begin() + tokens[r] * 256,
                                 wte.begin() + tokens[r] * 256 + 256);
    EXPECT_TRUE(
        same_bits(std::vector<float>(x.begin() + r * 256, x.begin() + r * 256 + 256), row, 256));
  }
  const int bad = 300;
  EXPECT_THROW(m.embed(&bad, 1, x.data()), gpt2::ModelError);
}

TEST(rotary, forward_equals_the_cached_loop_with_keys_cached_after_rotation) {
  const gpt2::Model base = gpt2::Model::synthetic(4, model_test::variant_config());
  const gpt2::RotaryModel m(base);
  const std::vector<int> tokens = model_test::spread_tokens(70, 300);
  const std::vector<float> truth = m.forward(tokens);
  for (int prefill : {1, 6, 70}) {
    gpt2::Decoder d = gpt2::variant_decoder(base, rotary(), 70);
    EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, prefill),
                          model_test::rows_from(truth, prefill - 1, 300), 300))
        << "prefill " << prefill;
  }
  EXPECT_FALSE(same_bits(truth, base.forward(tokens), 300)) << "rotary is not GPT-2";
}

TEST(rotary, gpt2_small_cached_loop_equals_forward) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const std::vector<int> tokens = model_test::spread_tokens(6, 50257);
  const std::vector<float> truth = gpt2::RotaryModel(base).forward(tokens);
  gpt2::Decoder d = gpt2::variant_decoder(base, rotary(), 6);
  EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, 2),
                        model_test::rows_from(truth, 1, 50257), 50257));
}

// Float weights used in place (real GPT-2's layout) give the same bits: the rotary model
// uses no column views.
TEST(rotary, float_weights_in_place_give_the_same_bits) {
  const gpt2::Config c = model_test::variant_config();
  const gpt2::Model panels = gpt2::Model::synthetic(6, c);
  const gpt2::Model f32 = model_test::f32_safetensors_model(6, c);
  const std::vector<int> tokens = model_test::spread_tokens(9, 300);
  EXPECT_TRUE(same_bits(gpt2::RotaryModel(f32).forward(tokens),
                        gpt2::RotaryModel(panels).forward(tokens), 300));
}

TEST(rotary, streaming_equals_forward_until_the_window_is_full) {
  const gpt2::Model base = gpt2::Model::synthetic(4, model_test::variant_config());
  const gpt2::RotaryModel m(base);
  const std::vector<int> tokens = model_test::spread_tokens(12, 300);
  const std::vector<float> truth = m.forward(tokens);
  const std::vector<float> streamed = m.forward_streaming(tokens, 2, 6);  // 8 held at most
  const size_t held = 8 * 300;
  EXPECT_TRUE(same_bits(std::vector<float>(streamed.begin(), streamed.begin() + held),
                        std::vector<float>(truth.begin(), truth.begin() + held), 300));
  for (int t = 8; t < 12; ++t) {  // each step after the first eviction differs
    const std::vector<float> a(streamed.begin() + t * 300, streamed.begin() + (t + 1) * 300);
    const std::vector<float> b(truth.begin() + t * 300, truth.begin() + (t + 1) * 300);
    EXPECT_FALSE(same_bits(a, b, 300)) << "token " << t;
  }
  EXPECT_TRUE(same_bits(m.forward_streaming(tokens, 4, 8), truth, 300)) << "12 fit in 4 + 8";
}

// With one layer, a position's key and value depend on its token alone (no wpe), so the
// streaming step over the held rows is exactly a fresh forward() of the held tokens: the
// sinks, then the last `window` tokens, at positions 0, 1, ... (their slots). Also past
// n_ctx, which slots never reach.
TEST(rotary, one_layer_streaming_is_a_forward_over_the_held_tokens_at_their_slots) {
  gpt2::Config c = model_test::variant_config();
  c.n_layer = 1;
  const gpt2::Model base = gpt2::Model::synthetic(8, c);
  const gpt2::RotaryModel m(base);
  const int sink = 3, window = 5, n = 100;  // n_ctx 80
  const std::vector<int> tokens = model_test::spread_tokens(n, 300);
  const std::vector<float> streamed = m.forward_streaming(tokens, sink, window);
  ASSERT_EQ(streamed.size(), size_t{n} * 300);
  for (int t : {0, 7, 8, 9, 40, 79, 80, 99}) {
    std::vector<int> held;
    for (int j = 0; j <= t; ++j)
      if (j < sink || j > t - window) held.push_back(tokens[j]);
    const std::vector<float> fresh = m.forward(held);
    EXPECT_TRUE(
        same_bits(std::vector<float>(streamed.begin() + t * 300, streamed.begin() + (t + 1) * 300),
                  std::vector<float>(fresh.end() - 300, fresh.end()), 300))
        << "token " << t;
  }
}

TEST(rotary, streaming_refuses_bad_windows_and_tokens) {
  const gpt2::Model base = gpt2::Model::synthetic(4, model_test::variant_config());
  const gpt2::RotaryModel m(base);
  const std::vector<int> tokens = {1, 2, 3};
  EXPECT_THROW(m.forward_streaming(tokens, -1, 4), gpt2::ModelError);
  EXPECT_THROW(m.forward_streaming(tokens, 2, 0), gpt2::ModelError);
  EXPECT_THROW(m.forward_streaming(tokens, 40, 41), gpt2::ModelError);  // n_ctx 80
  EXPECT_THROW(m.forward_streaming(std::vector<int>{1, 300}, 2, 4), gpt2::ModelError);
  EXPECT_TRUE(m.forward_streaming(std::vector<int>{}, 2, 4).empty());
}

TEST(rotary, attend_rows_is_the_ops_loop) {
  std::vector<float> q(64), keys(5 * 70), values(5 * 90), got(64), want(64), scores(5);
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = 0.01f * static_cast<float>((i * 37) % 101) - 0.5f;
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.02f * static_cast<float>((i * 11) % 53);
  for (int d = 0; d < 64; ++d) q[d] = 0.1f * static_cast<float>(d % 7) - 0.3f;
  gpt2::attend_rows(q.data(), keys.data(), 70, values.data(), 90, 5, 64, got.data());
  for (int j = 0; j < 5; ++j) scores[j] = gpt2::dot(q.data(), keys.data() + j * 70, 64) * 0.125f;
  gpt2::softmax(scores.data(), 5);
  gpt2::weighted_sum(scores.data(), values.data(), 5, 90, 64, want.data());
  EXPECT_TRUE(same_bits(got, want, 64));
  EXPECT_THROW(gpt2::attend_rows(q.data(), keys.data(), 70, values.data(), 90, 0, 64, got.data()),
               gpt2::ModelError);
}

}  // namespace
