// gpt2::Sampler and gpt2::generate (model/generate.hpp): greedy choice, seeded
// reproducibility, the distribution, top-k and top-p, and the generation loop's calls.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "generate.hpp"

namespace {

std::vector<float> pseudo_random_logits(int n, uint64_t seed) {
  std::vector<float> l(n);
  for (int i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    l[i] = static_cast<float>(static_cast<int>(seed >> 40) % 2000) / 200.0f;
  }
  return l;
}

TEST(sampler, greedy_takes_the_highest_logit_and_the_lowest_id_on_a_tie) {
  gpt2::Sampler s({});
  EXPECT_EQ(s.next(std::vector<float>{1, 3, 2}), 1);
  EXPECT_EQ(s.next(std::vector<float>{5, 1, 5}), 0);
  EXPECT_EQ(s.next(std::vector<float>{NAN, -1, -2}), 1);
  EXPECT_EQ(s.next(std::vector<float>{-INFINITY, -INFINITY, 0}), 2);
  EXPECT_THROW(s.next(std::vector<float>{NAN, NAN}), gpt2::ModelError);
}

TEST(sampler, the_same_seed_gives_the_same_tokens) {
  const std::vector<float> logits = pseudo_random_logits(1000, 3);
  gpt2::Sampler a({0.8f, 0, 1.0f, 42}), b({0.8f, 0, 1.0f, 42}), c({0.8f, 0, 1.0f, 43});
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const int x = a.next(logits);
    EXPECT_EQ(x, b.next(logits));
    differ += x != c.next(logits);
  }
  EXPECT_GT(differ, 100);
}

TEST(sampler, draws_follow_the_softmax_of_the_logits) {
  // Weights 1 and 3 (logits 0 and ln 3): id 1 about three times in four.
  gpt2::Sampler s({1.0f, 0, 1.0f, 7});
  const std::vector<float> logits{0.0f, std::log(3.0f)};
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.next(logits);
  EXPECT_NEAR(ones / double(n), 0.75, 0.015);
  // Temperature 2 flattens: weights 1 and sqrt(3), id 1 with 0.634.
  gpt2::Sampler hot({2.0f, 0, 1.0f, 7});
  ones = 0;
  for (int i = 0; i < n; ++i) ones += hot.next(logits);
  EXPECT_NEAR(ones / double(n), std::sqrt(3.0) / (1 + std::sqrt(3.0)), 0.015);
}

TEST(sampler, top_k_and_top_p_keep_only_the_best_tokens) {
  const std::vector<float> logits{0.0f, 3.0f, 1.0f, 2.9f, -5.0f};
  gpt2::Sampler k1({1.0f, 1, 1.0f, 1}), k2({1.0f, 2, 1.0f, 1});
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(k1.next(logits), 1);
    const int t = k2.next(logits);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
  // Probabilities 0.5, 0.3, 0.2 (ids 2, 0, 1): p = 0.5 keeps id 2 only; p = 0.7 also id 0.
  const std::vector<float> p{std::log(0.3f), std::log(0.2f), std::log(0.5f)};
  gpt2::Sampler p5({1.0f, 0, 0.5f, 1}), p7({1.0f, 0, 0.7f, 1});
  bool saw_zero = false;
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(p5.next(p), 2);
    const int t = p7.next(p);
    EXPECT_TRUE(t == 2 || t == 0) << t;
    saw_zero |= t == 0;
  }
  EXPECT_TRUE(saw_zero);
}

TEST(sampler, uniform_numbers_are_in_the_unit_interval) {
  gpt2::Sampler s({1.0f, 0, 1.0f, 0});
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = s.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(sampler, bad_options_are_refused) {
  EXPECT_THROW(gpt2::Sampler({-1.0f, 0, 1.0f, 0}), gpt2::ModelError);
  EXPECT_THROW(gpt2::Sampler({NAN, 0, 1.0f, 0}), gpt2::ModelError);
  EXPECT_THROW(gpt2::Sampler({1.0f, -1, 1.0f, 0}), gpt2::ModelError);
  EXPECT_THROW(gpt2::Sampler({1.0f, 0, 0.0f, 0}), gpt2::ModelError);
  EXPECT_THROW(gpt2::Sampler({1.0f, 0, 1.5f, 0}), gpt2::ModelError);
}

TEST(generate_loop, prefills_once_steps_once_per_further_token_and_stops_after_the_stop_token) {
  // A fake model: the next token is always the last one + 1.
  std::vector<int> steps;
  int prefills = 0;
  gpt2::Decoder d;
  auto logits_for = [](int last) {
    std::vector<float> l(10, 0.0f);
    l[(last + 1) % 10] = 1.0f;
    return l;
  };
  d.prefill = [&](std::span<const int> prompt) {
    ++prefills;
    return logits_for(prompt.back());
  };
  d.step = [&](int token) {
    steps.push_back(token);
    return logits_for(token);
  };
  gpt2::Sampler greedy({});
  std::vector<int> out;
  const std::vector<int> prompt{3, 4};
  auto s = gpt2::generate(d, prompt, 4, greedy, -1, [&](int t) { out.push_back(t); });
  EXPECT_EQ(out, (std::vector<int>{5, 6, 7, 8}));
  EXPECT_EQ(steps, (std::vector<int>{5, 6, 7}));  // no step for the last token
  EXPECT_EQ(prefills, 1);
  EXPECT_EQ(s.prompt_tokens, 2);
  EXPECT_EQ(s.new_tokens, 4);
  EXPECT_EQ(s.decode_steps, 3);

  out.clear();
  s = gpt2::generate(d, prompt, 10, greedy, 7, [&](int t) { out.push_back(t); });
  EXPECT_EQ(out, (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(s.new_tokens, 3);
  EXPECT_THROW(gpt2::generate(d, {}, 4, greedy, -1, [](int) {}), gpt2::ModelError);
}

}  // namespace
