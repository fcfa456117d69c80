// GroupedQueryModel (grouped_query.hpp): GPT-2's weights with fewer K/V heads. Its pieces
// against GPT-2's, its forward (which expands the shared heads) against the grouped loop
// that reads each shared head in place, and its errors.
#include "grouped_query.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_test_helpers.hpp"
#include "ops.hpp"
#include "tensors.hpp"
#include "variants.hpp"

namespace {

using model_test::same_bits;

gpt2::Variant gqa(int n_kv) { return gpt2::Variant::parse("gqa-" + std::to_string(n_kv), 1); }

// Rows that went through one block already: realistic residuals.
std::vector<float> residuals(const gpt2::Model& m, int n) {
  const int D = m.config().d_model;
  const std::vector<int> tokens = model_test::spread_tokens(n, m.config().vocab);
  std::vector<int> positions(n);
  for (int i = 0; i < n; ++i) positions[i] = i;
  std::vector<float> x(static_cast<size_t>(n) * D), attn(x.size());
  m.embed(tokens.data(), positions.data(), n, x.data());
  for (size_t i = 0; i < x.size(); ++i) attn[i] = x[(i * 7) % x.size()] * 3.0f;
  m.finish_block(0, attn.data(), n, x.data());
  return x;
}

TEST(grouped_query, twelve_kv_heads_are_gpt2_bit_for_bit) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const gpt2::GroupedQueryModel full(m, 12);
  const std::vector<int> tokens = model_test::spread_tokens(6, 50257);
  EXPECT_TRUE(same_bits(full.forward(tokens), m.forward(tokens), 50257));
}

TEST(grouped_query, keys_and_values_are_gpt2s_first_heads) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const int D = 768, n = 5;
  const std::vector<float> x = residuals(m, n);
  std::vector<float> q(n * D), k(n * D), v(n * D);
  m.qkv(3, x.data(), n, q.data(), k.data(), v.data());
  for (int n_kv : {1, 2, 3, 4, 6}) {
    const gpt2::GroupedQueryModel g(m, n_kv);
    EXPECT_EQ(g.group_size(), 12 / n_kv);
    EXPECT_EQ(g.kv_head(11), 11 / (12 / n_kv));
    const int w = g.kv_width();
    std::vector<float> gq(n * D), gk(n * w), gv(n * w), want_k, want_v;
    g.qkv(3, x.data(), n, gq.data(), gk.data(), gv.data());
    for (int r = 0; r < n; ++r) {
      want_k.insert(want_k.end(), k.begin() + r * D, k.begin() + r * D + w);
      want_v.insert(want_v.end(), v.begin() + r * D, v.begin() + r * D + w);
    }
    EXPECT_TRUE(same_bits(gq, q, D)) << n_kv << " K/V heads: q";
    EXPECT_TRUE(same_bits(gk, want_k, w)) << n_kv << " K/V heads: k";
    EXPECT_TRUE(same_bits(gv, want_v, w)) << n_kv << " K/V heads: v";
  }
}

// The yardstick (shared heads expanded to 12, GPT-2's attention) against the grouped
// loop (variants.hpp: each query head reads its K/V head in a [n_kv, seq, 64] cache),
// decoding one token at a time and after prefills of several lengths.
TEST(grouped_query, expanded_forward_equals_the_grouped_cached_loop) {
  const gpt2::Model m = gpt2::Model::synthetic(3, model_test::variant_config());
  const std::vector<int> tokens = model_test::spread_tokens(40, 300);
  for (int n_kv : {1, 2, 4}) {
    const gpt2::GroupedQueryModel g(m, n_kv);
    const std::vector<float> truth = g.forward(tokens);
    for (int prefill : {1, 4, 17, 40}) {
      gpt2::Decoder d = gpt2::variant_decoder(m, gqa(n_kv), 40);
      EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, prefill),
                            model_test::rows_from(truth, prefill - 1, 300), 300))
          << n_kv << " K/V heads, prefill " << prefill;
    }
  }
}

TEST(grouped_query, gpt2_small_grouped_loop_equals_forward) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const std::vector<int> tokens = model_test::spread_tokens(6, 50257);
  std::vector<float> first;
  for (int n_kv : {4, 2, 1}) {
    const std::vector<float> truth = gpt2::GroupedQueryModel(m, n_kv).forward(tokens);
    gpt2::Decoder d = gpt2::variant_decoder(m, gqa(n_kv), 6);
    EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, 3),
                          model_test::rows_from(truth, 2, 50257), 50257))
        << n_kv << " K/V heads";
    // Sharing heads changes the model: each head count gives other logits.
    if (!first.empty()) {
      EXPECT_FALSE(same_bits(truth, first, 50257)) << n_kv << " K/V heads";
    }
    first = truth;
  }
}

TEST(grouped_query, expand_heads_copies_each_query_heads_kv_head) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const gpt2::GroupedQueryModel g(m, 4);
  std::vector<float> kv(2 * 256), out(2 * 768);
  for (size_t i = 0; i < kv.size(); ++i) kv[i] = static_cast<float>(i);
  g.expand_heads(kv.data(), 2, out.data());
  for (int r = 0; r < 2; ++r)
    for (int h = 0; h < 12; ++h)
      for (int d = 0; d < 64; ++d)
        ASSERT_EQ(out[r * 768 + h * 64 + d], kv[r * 256 + (h / 3) * 64 + d]) << r << " " << h;
}

TEST(grouped_query, counts_rows_as_the_base_models_pieces) {
  gpt2::Model m = gpt2::Model::synthetic(3, model_test::variant_config());
  const gpt2::GroupedQueryModel g(m, 2);
  const std::vector<float> x = residuals(m, 3);
  m.reset_work();
  std::vector<float> q(3 * 256), k(3 * 128), v(3 * 128);
  g.qkv(1, x.data(), 3, q.data(), k.data(), v.data());
  g.forward(std::vector<int>{1, 2});
  const gpt2::WorkCounts w = m.work();
  EXPECT_EQ(w.qkv[1], 3u + 2u);
  EXPECT_EQ(w.qkv[0], 2u);
  EXPECT_EQ(w.forward, 2u);
  EXPECT_EQ(w.embed, 2u);
}

TEST(grouped_query, refuses_head_counts_that_do_not_divide_and_float_weights) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  for (int n_kv : {0, 5, 7, 13, -1}) {
    try {
      gpt2::GroupedQueryModel g(m, n_kv);
      ADD_FAILURE() << n_kv << " K/V heads accepted";
    } catch (const gpt2::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("do not divide the 12 query heads"), std::string::npos)
          << e.what();
    }
  }
  // Float weights used in place (a real model.safetensors) have no panels to view.
  const gpt2::Model f32 = model_test::f32_safetensors_model(3, model_test::variant_config());
  try {
    gpt2::GroupedQueryModel g(f32, 2);
    ADD_FAILURE() << "float weights accepted";
  } catch (const gpt2::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("panel layout"), std::string::npos) << e.what();
  }
  const gpt2::GroupedQueryModel g(m, 4);
  std::vector<float> x(768), q(768), kv(256);
  EXPECT_THROW(g.qkv(12, x.data(), 1, q.data(), kv.data(), kv.data()), gpt2::ModelError);
  EXPECT_THROW(g.forward(std::vector<int>{50257}), gpt2::ModelError);
}

}  // namespace
