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

TEST(work_counts, count_the_rows_through_each_piece_and_reset) {
  const gpt2::Config c = model_test::small_config();
  gpt2::Model m = gpt2::Model::synthetic(3, c);
  gpt2::WorkCounts zero = m.work();
  EXPECT_EQ(zero.embed, 0u);
  EXPECT_EQ(zero.qkv, std::vector<uint64_t>(size_t(c.n_layer), 0));
  const std::vector<int> tokens = {5, 6, 7};
  const std::vector<int> positions = {0, 1, 2};
  std::vector<float> x(3 * size_t(c.d_model)), q(x.size()), k(x.size()), v(x.size());
  m.embed(tokens.data(), positions.data(), 3, x.data());
  m.qkv(1, x.data(), 2, q.data(), k.data(), v.data());
  m.finish_block(0, q.data(), 3, x.data());
  std::vector<float> logits(size_t(c.vocab));
  m.logits(x.data(), 1, logits.data());
  gpt2::WorkCounts w = m.work();
  EXPECT_EQ(w.embed, 3u);
  EXPECT_EQ(w.qkv, (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(w.finish_block, (std::vector<uint64_t>{3, 0}));
  EXPECT_EQ(w.logits, 1u);
  EXPECT_EQ(w.forward, 0u);

  // forward() counts its tokens, and its rows through every piece.
  m.reset_work();
  std::vector<float> before = m.forward(tokens);
  w = m.work();
  EXPECT_EQ(w.forward, 3u);
  EXPECT_EQ(w.embed, 3u);
  EXPECT_EQ(w.qkv, (std::vector<uint64_t>{3, 3}));
  EXPECT_EQ(w.finish_block, (std::vector<uint64_t>{3, 3}));
  EXPECT_EQ(w.logits, 3u);
  // Counting changes no number.
  EXPECT_TRUE(model_test::same_bits(m.forward(tokens), before, c.vocab));
}
