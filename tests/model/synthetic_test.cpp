// Seeded synthetic weights (synthetic.hpp, tensors.hpp).
#include "synthetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "model_test_helpers.hpp"
#include "tensors.hpp"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(synthetic, tensor_specs_follow_the_hugging_face_names) {
  const auto specs = gpt2::tensor_specs(gpt2::gpt2_small());
  ASSERT_EQ(specs.size(), 4u + 12u * 12u);
  EXPECT_EQ(specs[0].name, "wte.weight");
  EXPECT_EQ(specs[0].shape, (std::vector<int64_t>{50257, 768}));
  EXPECT_EQ(specs[1].shape, (std::vector<int64_t>{1024, 768}));
  EXPECT_EQ(specs[4 + 2].name, "h.0.attn.c_attn.weight");
  EXPECT_EQ(specs[4 + 2].shape, (std::vector<int64_t>{768, 2304}));
  EXPECT_EQ(specs[4 + 12 * 11 + 10].name, "h.11.mlp.c_proj.weight");
  EXPECT_EQ(specs[4 + 12 * 11 + 10].shape, (std::vector<int64_t>{3072, 768}));
  int64_t params = 0;
  for (const auto& s : specs) {
    EXPECT_EQ(s.id, &s - specs.data());
    params += s.numel();
  }
  EXPECT_EQ(params, 124439808);  // GPT-2 small
}

TEST(synthetic, invalid_configs_are_rejected) {
  gpt2::Config c = model_test::small_config();
  c.d_model = 17;
  EXPECT_THROW(gpt2::tensor_specs(c), gpt2::ModelError);
  c = model_test::small_config();
  c.vocab = 0;
  EXPECT_THROW(gpt2::Model::synthetic(1, c), gpt2::ModelError);
}

// Pinned values (computed independently from the formula in synthetic.hpp): if these
// change, every fixture made from synthetic weights changes too. Matrix values are g * amp
// (0xbb93c6cf, 0x3c052f1e, 0xbafecb5e) cut to bfloat16.
TEST(synthetic, values_are_pinned) {
  EXPECT_EQ(bits_of(gpt2::synthetic_value(1, 0, gpt2::TensorKind::matrix, 0)), 0xbb930000u);
  EXPECT_EQ(bits_of(gpt2::synthetic_value(1, 0, gpt2::TensorKind::matrix, 12345)), 0x3c050000u);
  EXPECT_EQ(bits_of(gpt2::synthetic_value(7, 6, gpt2::TensorKind::matrix, 99)), 0xbafe0000u);
  EXPECT_EQ(bits_of(gpt2::synthetic_value(1, 4, gpt2::TensorKind::norm_weight, 3)), 0x3f7f2d66u);
}

TEST(synthetic, fill_equals_value_by_value) {
  for (gpt2::TensorKind kind : {gpt2::TensorKind::bias, gpt2::TensorKind::matrix,
                                gpt2::TensorKind::norm_weight, gpt2::TensorKind::position}) {
    std::vector<float> v(1000);
    gpt2::synthetic_fill(42, 9, kind, 500, 1500, v.data());
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(bits_of(v[i]), bits_of(gpt2::synthetic_value(42, 9, kind, 500 + i)))
          << "kind " << static_cast<int>(kind) << ", element " << 500 + i;
    }
  }
}

TEST(synthetic, every_matrix_value_is_a_bfloat16) {
  std::vector<float> v(100000);
  gpt2::synthetic_fill(3, 6, gpt2::TensorKind::matrix, 0, v.size(), v.data());
  int nonzero = 0;
  for (float x : v) {
    ASSERT_EQ(bits_of(x) & 0xffffu, 0u) << x;
    nonzero += x != 0.0f;
  }
  EXPECT_GT(nonzero, 99000);
}

TEST(synthetic, scales_are_gpt2_like) {
  auto stats = [](const std::vector<float>& v) {
    double m = 0, s = 0;
    for (float x : v) m += x;
    m /= v.size();
    for (float x : v) s += (x - m) * (x - m);
    return std::pair<double, double>{m, std::sqrt(s / v.size())};
  };
  const gpt2::Config c = gpt2::gpt2_small();
  const auto [m1, s1] = stats(gpt2::synthetic_tensor(1, c, "h.3.attn.c_proj.weight"));
  EXPECT_NEAR(m1, 0.0, 1e-4);
  EXPECT_NEAR(s1, 0.02, 5e-4);
  const auto [m2, s2] = stats(gpt2::synthetic_tensor(1, c, "wpe.weight"));
  EXPECT_NEAR(m2, 0.0, 1e-4);
  EXPECT_NEAR(s2, 0.01, 3e-4);
  const auto [m3, s3] = stats(gpt2::synthetic_tensor(1, c, "h.0.ln_1.weight"));
  EXPECT_NEAR(m3, 1.0, 0.01);
  EXPECT_NEAR(s3, 0.0577, 0.005);
}

TEST(synthetic, seeds_and_tensors_give_different_values) {
  const gpt2::Config c = model_test::small_config();
  const auto a = gpt2::synthetic_tensor(1, c, "h.0.attn.c_attn.weight");
  const auto b = gpt2::synthetic_tensor(2, c, "h.0.attn.c_attn.weight");
  const auto d = gpt2::synthetic_tensor(1, c, "h.1.attn.c_attn.weight");
  int same_ab = 0, same_ad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same_ab += a[i] == b[i];
    same_ad += a[i] == d[i];
  }
  EXPECT_LT(same_ab, 10);
  EXPECT_LT(same_ad, 10);
  EXPECT_THROW(gpt2::synthetic_tensor(1, c, "h.2.ln_1.weight"), gpt2::ModelError);
}

TEST(synthetic, model_embeds_the_documented_values) {
  // embed(token, pos) = wte[token] + wpe[pos], from the model's own storage (wte is stored
  // transposed, so this checks the layout too).
  const gpt2::Config c = model_test::small_config();
  const gpt2::Model m = gpt2::Model::synthetic(5, c);
  const auto wte = gpt2::synthetic_tensor(5, c, "wte.weight");
  const auto wpe = gpt2::synthetic_tensor(5, c, "wpe.weight");
  for (int token : {0, 1, 50, 96}) {
    for (int pos : {0, 7, 31}) {
      std::vector<float> x(c.d_model);
      m.embed(&token, &pos, 1, x.data());
      for (int i = 0; i < c.d_model; ++i) {
        ASSERT_EQ(bits_of(x[i]), bits_of(wte[token * c.d_model + i] + wpe[pos * c.d_model + i]));
      }
    }
  }
}

TEST(synthetic, gpt2_small_model_has_the_real_shape) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const gpt2::Config& c = m.config();
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.d_model, 768);
  EXPECT_EQ(c.n_ctx, 1024);
  EXPECT_EQ(c.vocab, 50257);
  // The matrices as bfloat16 (2 bytes), everything else as floats, and one row of wpe.
  const uint64_t matrices = 50257u * 768u + 12u * (768u * 2304u + 768u * 768u + 2u * 768u * 3072u);
  EXPECT_EQ(m.decode_weight_bytes(),
            2u * matrices + 4u * (124439808u - 1024u * 768u - matrices + 768u));
  int token = 50256, pos = 1023;
  std::vector<float> x(768);
  m.embed(&token, &pos, 1, x.data());
  for (int i = 0; i < 768; ++i) {
    const float wte = gpt2::synthetic_value(1, 0, gpt2::TensorKind::matrix, token * 768ull + i);
    const float wpe = gpt2::synthetic_value(1, 1, gpt2::TensorKind::position, pos * 768ull + i);
    ASSERT_EQ(bits_of(x[i]), bits_of(wte + wpe));
  }
}

}  // namespace

namespace {

// Model::with_token_row_copied: token `to` gets `from`'s embedding row, so the two tie
// exactly after any context; every other logit, and the base model, stay as they were.
TEST(token_row_copied, two_tokens_tie_bit_for_bit_and_nothing_else_changes) {
  const gpt2::Model& base = model_test::gpt2_small_model();
  const int from = 318, to = 40000;
  const gpt2::Model tied = base.with_token_row_copied(from, to);
  const std::vector<int> context = {464, 2068, 7586};
  const std::vector<float> b = base.forward(context), t = tied.forward(context);
  ASSERT_EQ(b.size(), t.size());
  const size_t vocab = size_t(base.config().vocab);
  ASSERT_NE(bits_of(b[b.size() - vocab + from]), bits_of(b[b.size() - vocab + to]));
  for (size_t row = 0; row < context.size(); ++row) {
    const float* tr = t.data() + row * vocab;
    const float* br = b.data() + row * vocab;
    EXPECT_EQ(bits_of(tr[from]), bits_of(tr[to])) << "position " << row;
    int changed = 0;
    for (size_t j = 0; j < vocab; ++j) changed += bits_of(tr[j]) != bits_of(br[j]);
    EXPECT_EQ(changed, 1) << "position " << row << ": only token " << to << "'s logit moves";
  }
  EXPECT_THROW(base.with_token_row_copied(from, int(vocab)), gpt2::ModelError);
  EXPECT_THROW(base.with_token_row_copied(-1, to), gpt2::ModelError);
}

}  // namespace
