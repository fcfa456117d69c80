// Model::forward and the per-block pieces: against a plain double GPT-2 (the test's own
// triple loops) within 1e-5 relative, and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpt2.hpp"
#include "model_test_helpers.hpp"

namespace {

using model_test::close_rows;
using model_test::small_config;

// Relative to the largest |logit| of the row: float sums against double ones.
constexpr double REL = 1e-5;

TEST(forward, small_model_matches_naive_double_gpt2) {
  const gpt2::Config c = small_config();
  const gpt2::Model m = gpt2::Model::synthetic(11, c);
  const auto w = model_test::synthetic_tensors(11, c);
  std::vector<int> all(c.n_ctx);
  for (int i = 0; i < c.n_ctx; ++i) all[i] = (i * 37 + 5) % c.vocab;
  for (const std::vector<int>& tokens : {std::vector<int>{0}, std::vector<int>{96, 1, 50}, all}) {
    EXPECT_TRUE(
        close_rows(m.forward(tokens), model_test::naive_forward(c, w, tokens), c.vocab, REL))
        << tokens.size() << " tokens";
  }
}

TEST(forward, gpt2_small_widths_match_naive_double_gpt2) {
  // GPT-2 small's widths (768, 12 heads of 64, MLP 3072) with 2 blocks and a small vocab:
  // the same kernels and shapes as the real model at a fraction of the memory.
  gpt2::Config c = gpt2::gpt2_small();
  c.n_layer = 2;
  c.n_ctx = 64;
  c.vocab = 1000;
  const gpt2::Model m = gpt2::Model::synthetic(12, c);
  const auto w = model_test::synthetic_tensors(12, c);
  const std::vector<int> tokens = {464, 999, 0, 586, 13};
  const auto logits = m.forward(tokens);
  EXPECT_TRUE(close_rows(logits, model_test::naive_forward(c, w, tokens), c.vocab, REL));
  // GPT-2-like scale: the logits are spread, not all equal and not exploding.
  const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
  EXPECT_GT(*hi - *lo, 1.0f);
  EXPECT_LT(*hi - *lo, 100.0f);
}

void expect_model_error(auto call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no ModelError; expected one mentioning '" << needle << "'";
  } catch (const gpt2::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(forward, bad_tokens_and_lengths_are_model_errors) {
  const gpt2::Config c = small_config();
  const gpt2::Model m = gpt2::Model::synthetic(1, c);
  expect_model_error([&] { m.forward(std::vector<int>{1, -1}); }, "token 1 has id -1");
  expect_model_error([&] { m.forward(std::vector<int>{97}); },
                     "token 0 has id 97, outside 0 .. 96");
  std::vector<int> too_long(c.n_ctx + 1, 3);
  expect_model_error([&] { m.forward(too_long); }, "33 tokens, more than n_ctx = 32");
  EXPECT_TRUE(m.forward(std::vector<int>{}).empty());
  too_long.pop_back();
  EXPECT_EQ(m.forward(too_long).size(), static_cast<size_t>(c.n_ctx) * c.vocab);
}

TEST(forward, pieces_reject_bad_arguments) {
  const gpt2::Config c = small_config();
  const gpt2::Model m = gpt2::Model::synthetic(1, c);
  std::vector<float> x(c.d_model), q(c.d_model), k(c.d_model), v(c.d_model), out(c.vocab);
  int token = 5, pos = 0, bad_token = 97, bad_pos = 32, neg = -1;
  expect_model_error([&] { m.embed(&bad_token, &pos, 1, x.data()); }, "token id 97");
  expect_model_error([&] { m.embed(&neg, &pos, 1, x.data()); }, "token id -1");
  expect_model_error([&] { m.embed(&token, &bad_pos, 1, x.data()); }, "position 32");
  expect_model_error([&] { m.embed(&token, &neg, 1, x.data()); }, "position -1");
  expect_model_error([&] { m.qkv(2, x.data(), 1, q.data(), k.data(), v.data()); }, "layer 2");
  expect_model_error([&] { m.qkv(-1, x.data(), 1, q.data(), k.data(), v.data()); }, "layer -1");
  expect_model_error([&] { m.finish_block(2, x.data(), 1, x.data()); }, "layer 2");
  expect_model_error([&] { m.logits(x.data(), -1, out.data()); }, "n_rows -1");
  // zero rows: nothing to do, no error
  m.qkv(0, x.data(), 0, q.data(), k.data(), v.data());
  m.logits(x.data(), 0, out.data());
}

TEST(forward, set_threads_clamps_and_reports) {
  gpt2::Model m = gpt2::Model::synthetic(1, small_config());
  EXPECT_GE(m.threads(), 1);
  m.set_threads(3);
  EXPECT_EQ(m.threads(), 3);
  m.set_threads(0);
  EXPECT_EQ(m.threads(), 1);
}

}  // namespace
