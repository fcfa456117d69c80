// LatentModel (latent.hpp): multi-head latent attention. Where its numbers come from
// (c_attn's columns, the generated up-projections), each piece's documented loop, the
// absorbed forward against the latent cached loop, and the expanded order's other bits.
#include "latent.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model_test_helpers.hpp"
#include "ops.hpp"
#include "synthetic.hpp"
#include "tensors.hpp"
#include "variants.hpp"

namespace {

using model_test::bits;
using model_test::same_bits;

gpt2::Variant latent(uint64_t seed) { return gpt2::Variant::parse("latent", seed); }

std::vector<float> slice(const std::vector<float>& a, size_t at, size_t n) {
  return std::vector<float>(a.begin() + static_cast<ptrdiff_t>(at),
                            a.begin() + static_cast<ptrdiff_t>(at + n));
}

// The embeddings of a few tokens through one block of the base model: realistic inputs.
std::vector<float> inputs(const gpt2::Model& m, int n) {
  const int D = m.config().d_model;
  const std::vector<int> tokens = model_test::spread_tokens(n, m.config().vocab);
  std::vector<int> positions(n, 0);
  std::vector<float> x(static_cast<size_t>(n) * D), attn(x.size(), 0.25f);
  m.embed(tokens.data(), positions.data(), n, x.data());
  m.finish_block(0, attn.data(), n, x.data());
  return x;
}

TEST(latent, shapes_and_scale) {
  const gpt2::LatentModel m(model_test::gpt2_small_model(), 2026);
  EXPECT_EQ(m.latent_dim(), 128);
  EXPECT_EQ(m.rope_dim(), 64);
  EXPECT_EQ(m.row_dim(), 192);  // per position and layer: 192 floats, not 2 * 768
  EXPECT_EQ(m.query_dim(), 192);
  EXPECT_EQ(m.scale(), gpt2::attention_scale(128));
  EXPECT_EQ(bits(m.scale()), 0x3db504f3u);  // 0.0883883461f
}

// project() is c_attn's columns: q_nope = GPT-2's q, q_rope = GPT-2's k rotated head by
// head, the row = [GPT-2's v columns 0..127 ; v columns 128..191 rotated].
TEST(latent, project_is_gpt2s_columns_rotated) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const gpt2::LatentModel m(base, 2026);
  const int n = 4;
  const std::vector<float> x = inputs(base, n);
  const std::vector<int> positions = {0, 5, 1023, 17};
  std::vector<float> q(n * 768), k(n * 768), v(n * 768), q_nope(n * 768), q_rope(n * 768),
      rows(n * 192);
  base.qkv(2, x.data(), n, q.data(), k.data(), v.data());
  m.project(2, x.data(), positions.data(), n, q_nope.data(), q_rope.data(), rows.data());
  EXPECT_TRUE(same_bits(q_nope, q, 768));
  for (int r = 0; r < n; ++r) {
    std::vector<float> want(768), k_rope(64);
    for (int h = 0; h < 12; ++h)
      m.table().rotate(k.data() + r * 768 + h * 64, positions[r], want.data() + h * 64);
    EXPECT_TRUE(same_bits(slice(q_rope, r * 768, 768), want, 64)) << "row " << r;
    EXPECT_TRUE(same_bits(slice(rows, r * 192, 128), slice(v, r * 768, 128), 128)) << "row " << r;
    m.table().rotate(v.data() + r * 768 + 128, positions[r], k_rope.data());
    EXPECT_TRUE(same_bits(slice(rows, r * 192 + 128, 64), k_rope, 64)) << "row " << r;
  }
  EXPECT_THROW(m.project(2, x.data(), std::vector<int>{1024}.data(), 1, q_nope.data(),
                         q_rope.data(), rows.data()),
               gpt2::ModelError);
}

// A one-hot latent picks one row of an up-projection exactly (the other products are
// zeros): W_uk and W_uv are the synthetic matrices of ids 1000 + 2l and 1001 + 2l.
TEST(latent, up_projections_are_the_seeded_synthetic_matrices) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const uint64_t seed = 77;
  const gpt2::LatentModel m(base, seed);
  for (int layer : {0, 11}) {
    for (int t : {0, 45, 127}) {
      std::vector<float> row(192, 0.0f), keys(12 * 128), values(768);
      row[t] = 1.0f;
      for (int d = 0; d < 64; ++d) row[128 + d] = static_cast<float>(d);
      m.expand_keys(layer, row.data(), 1, keys.data());
      m.expand_values(layer, row.data(), 1, values.data());
      for (int j = 0; j < 768; j += 7) {
        const float uk =
            gpt2::synthetic_value(seed, 1000 + 2 * layer, gpt2::TensorKind::matrix, t * 768 + j);
        const float uv =
            gpt2::synthetic_value(seed, 1001 + 2 * layer, gpt2::TensorKind::matrix, t * 768 + j);
        ASSERT_EQ(bits(keys[(j / 64) * 128 + j % 64]), bits(uk)) << layer << " " << t << " " << j;
        ASSERT_EQ(bits(values[j]), bits(uv)) << layer << " " << t << " " << j;
      }
      for (int h = 0; h < 12; ++h)  // and each head's key ends with the shared k_rope
        ASSERT_EQ(keys[h * 128 + 64 + 9], 9.0f);
    }
  }
}

// absorb_query and output_from_latent perform the loops latent.hpp states, bit for bit.
TEST(latent, absorbed_pieces_are_the_documented_loops) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const uint64_t seed = 5;
  const gpt2::LatentModel m(base, seed);
  const int layer = 4, n = 2;
  std::vector<float> q_nope(n * 768), q_rope(n * 768), q(n * 12 * 192), o(n * 12 * 128),
      attn(n * 768);
  for (size_t i = 0; i < q_nope.size(); ++i) {
    q_nope[i] = 0.013f * static_cast<float>((i * 29) % 97) - 0.6f;
    q_rope[i] = static_cast<float>(i);
  }
  for (size_t i = 0; i < o.size(); ++i) o[i] = 0.021f * static_cast<float>((i * 13) % 89) - 0.9f;
  m.absorb_query(layer, q_nope.data(), q_rope.data(), n, q.data());
  m.output_from_latent(layer, o.data(), n, attn.data());
  const std::vector<float> uk = [&] {
    std::vector<float> w(128 * 768);
    gpt2::synthetic_fill(seed, 1000 + 2 * layer, gpt2::TensorKind::matrix, 0, w.size(), w.data());
    return w;
  }();
  std::vector<float> uv(128 * 768);
  gpt2::synthetic_fill(seed, 1001 + 2 * layer, gpt2::TensorKind::matrix, 0, uv.size(), uv.data());
  for (int r = 0; r < n; ++r) {
    for (int h = 0; h < 12; ++h) {
      const float* qh = q.data() + (r * 12 + h) * 192;
      for (int t = 0; t < 128; ++t) {
        float s = 0.0f;
        for (int d = 0; d < 64; ++d)
          s = s + q_nope[r * 768 + h * 64 + d] * uk[t * 768 + h * 64 + d];
        ASSERT_EQ(bits(qh[t]), bits(s)) << r << " " << h << " " << t;
      }
      for (int d = 0; d < 64; ++d) ASSERT_EQ(qh[128 + d], q_rope[r * 768 + h * 64 + d]);
      for (int d = 0; d < 64; ++d) {
        float s = 0.0f;
        for (int t = 0; t < 128; ++t) s = s + o[(r * 12 + h) * 128 + t] * uv[t * 768 + h * 64 + d];
        ASSERT_EQ(bits(attn[r * 768 + h * 64 + d]), bits(s)) << r << " " << h << " " << d;
      }
    }
  }
}

TEST(latent, forward_equals_the_latent_cached_loop) {
  const gpt2::Model base = gpt2::Model::synthetic(9, model_test::variant_config());
  const gpt2::LatentModel m(base, 9);
  const std::vector<int> tokens = model_test::spread_tokens(70, 300);
  const std::vector<float> truth = m.forward(tokens);
  for (int prefill : {1, 5, 16, 70}) {
    gpt2::Decoder d = gpt2::variant_decoder(base, latent(9), 70);
    EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, prefill),
                          model_test::rows_from(truth, prefill - 1, 300), 300))
        << "prefill " << prefill;
  }
}

TEST(latent, gpt2_small_cached_loop_equals_forward) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const std::vector<int> tokens = model_test::spread_tokens(6, 50257);
  const std::vector<float> truth = gpt2::LatentModel(base, 2026).forward(tokens);
  gpt2::Decoder d = gpt2::variant_decoder(base, latent(2026), 6);
  EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, 4),
                        model_test::rows_from(truth, 3, 50257), 50257));
  EXPECT_FALSE(same_bits(gpt2::LatentModel(base, 2027).forward(tokens), truth, 50257))
      << "another seed";
}

// The two orders are one model in exact arithmetic and two in floats: the expanded
// forward is close to the absorbed one and not equal.
TEST(latent, expanded_order_is_close_and_not_equal) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const gpt2::LatentModel m(base, 2026);
  const std::vector<int> tokens = model_test::spread_tokens(6, 50257);
  const std::vector<float> absorbed = m.forward(tokens);
  const std::vector<float> expanded = m.forward_expanded(tokens);
  EXPECT_FALSE(same_bits(expanded, absorbed, 50257));
  std::vector<double> want(absorbed.begin(), absorbed.end());
  EXPECT_TRUE(model_test::close_rows(expanded, want, 50257, 1e-5));
}

// One score both ways, over the model's own numbers: the absorbed dot product of 192
// terms against the expanded one of 128; and the scale, 1/sqrt(128), which is not a power
// of two, multiplying the score or folded into the query.
TEST(latent, one_score_in_the_two_orders) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const gpt2::LatentModel m(base, 2026);
  const int n = 8;
  const std::vector<float> x = inputs(base, n);
  std::vector<int> positions(n);
  for (int i = 0; i < n; ++i) positions[i] = i;
  std::vector<float> q_nope(n * 768), q_rope(n * 768), rows(n * 192), q(n * 12 * 192),
      keys(n * 12 * 128);
  m.project(1, x.data(), positions.data(), n, q_nope.data(), q_rope.data(), rows.data());
  m.absorb_query(1, q_nope.data(), q_rope.data(), n, q.data());
  m.expand_keys(1, rows.data(), n, keys.data());
  int order_differs = 0, scale_differs = 0, total = 0;
  for (int i = 0; i < n; ++i) {
    for (int h = 0; h < 12; ++h) {
      std::vector<float> qe(128), q_scaled(192);  // [q_nope_h ; q_rope_h], and absorbed * scale
      std::memcpy(qe.data(), q_nope.data() + i * 768 + h * 64, 64 * sizeof(float));
      std::memcpy(qe.data() + 64, q_rope.data() + i * 768 + h * 64, 64 * sizeof(float));
      for (int t = 0; t < 192; ++t) q_scaled[t] = q[(i * 12 + h) * 192 + t] * m.scale();
      for (int j = 0; j <= i; ++j) {
        const float absorbed =
            gpt2::dot(q.data() + (i * 12 + h) * 192, rows.data() + j * 192, 192) * m.scale();
        const float expanded =
            gpt2::dot(qe.data(), keys.data() + (j * 12 + h) * 128, 128) * m.scale();
        const float folded = gpt2::dot(q_scaled.data(), rows.data() + j * 192, 192);
        EXPECT_NEAR(absorbed, expanded, 1e-5f);
        order_differs += bits(absorbed) != bits(expanded);
        scale_differs += bits(absorbed) != bits(folded);
        ++total;
      }
    }
  }
  EXPECT_GT(order_differs, total / 4) << "of " << total;
  EXPECT_GT(scale_differs, total / 4) << "of " << total;
}

TEST(latent, counts_project_as_qkv_rows) {
  gpt2::Model base = gpt2::Model::synthetic(9, model_test::variant_config());
  const gpt2::LatentModel m(base, 9);
  base.reset_work();
  m.forward(std::vector<int>{1, 2, 3});
  const gpt2::WorkCounts w = base.work();
  EXPECT_EQ(w.forward, 3u);
  EXPECT_EQ(w.embed, 3u);
  EXPECT_EQ(w.qkv[0], 3u);
  EXPECT_EQ(w.finish_block[1], 3u);
  EXPECT_EQ(w.logits, 3u);
}

TEST(latent, refuses_shapes_without_room_and_float_weights) {
  EXPECT_THROW(gpt2::LatentModel(gpt2::Model::synthetic(1, model_test::small_config()), 1),
               gpt2::ModelError);  // d_model 16
  gpt2::Config c = model_test::variant_config();
  c.n_head = 2;
  c.d_model = 128;  // 128 + 64 > 128
  try {
    gpt2::LatentModel m(gpt2::Model::synthetic(1, c), 1);
    ADD_FAILURE() << "d_model 128 accepted";
  } catch (const gpt2::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("leaves no room"), std::string::npos) << e.what();
  }
  const gpt2::Model f32 = model_test::f32_safetensors_model(3, model_test::variant_config());
  EXPECT_THROW(gpt2::LatentModel(f32, 1), gpt2::ModelError);
  const gpt2::LatentModel m(model_test::gpt2_small_model(), 1);
  std::vector<float> buf(12 * 192);
  EXPECT_THROW(m.absorb_query(12, buf.data(), buf.data(), 1, buf.data()), gpt2::ModelError);
  EXPECT_THROW(m.output_from_latent(-1, buf.data(), 1, buf.data()), gpt2::ModelError);
}

}  // namespace
