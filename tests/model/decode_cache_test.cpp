// The model's own cached loop (gpt2::extend, cached_decoder, no_cache_decoder in
// model/generate.hpp): bit-identical to Model::forward, however the tokens are split.
#include <gtest/gtest.h>

#include <vector>

#include "generate.hpp"
#include "model_test_helpers.hpp"

namespace {

const std::vector<int> tokens{5, 17, 3, 96, 0, 44, 44, 12, 80, 1};

std::vector<float> row(const std::vector<float>& all, int r, int vocab) {
  return std::vector<float>(all.begin() + size_t(r) * vocab, all.begin() + size_t(r + 1) * vocab);
}

TEST(decode_cache, extend_gives_forwards_bits_one_token_at_a_time_or_in_chunks) {
  const gpt2::Model m = gpt2::Model::synthetic(3, model_test::small_config());
  const int vocab = m.config().vocab, n = static_cast<int>(tokens.size());
  const std::vector<float> want = m.forward(tokens);  // [n, vocab]
  for (int chunk : {1, 3, n}) {
    gpt2::DecodeCache cache = gpt2::make_decode_cache(m, n);
    std::vector<float> logits(vocab);
    for (int first = 0; first < n; first += chunk) {
      const int count = std::min(chunk, n - first);
      gpt2::extend(m, cache, std::span<const int>(tokens).subspan(first, count), logits.data());
      EXPECT_TRUE(model_test::same_bits(logits, row(want, first + count - 1, vocab), vocab))
          << "chunk " << chunk << ", position " << first + count - 1;
    }
    EXPECT_EQ(cache.length, n);
  }
}

TEST(decode_cache, cached_and_no_cache_decoders_agree_with_forward) {
  const gpt2::Model m = gpt2::Model::synthetic(4, model_test::small_config());
  const int vocab = m.config().vocab;
  const std::vector<float> want = m.forward(tokens);
  for (gpt2::Decoder d : {gpt2::cached_decoder(m, 16), gpt2::no_cache_decoder(m)}) {
    std::vector<float> l = d.prefill(std::span<const int>(tokens).first(4));
    EXPECT_TRUE(model_test::same_bits(l, row(want, 3, vocab), vocab));
    for (int i = 4; i < static_cast<int>(tokens.size()); ++i) {
      l = d.step(tokens[i]);
      EXPECT_TRUE(model_test::same_bits(l, row(want, i, vocab), vocab)) << "position " << i;
    }
    // A second prefill starts over.
    l = d.prefill(std::span<const int>(tokens).first(2));
    EXPECT_TRUE(model_test::same_bits(l, row(want, 1, vocab), vocab));
  }
}

TEST(decode_cache, bad_calls_are_errors_before_any_work) {
  const gpt2::Model m = gpt2::Model::synthetic(3, model_test::small_config());
  std::vector<float> logits(m.config().vocab);
  EXPECT_THROW(gpt2::make_decode_cache(m, 0), gpt2::ModelError);
  EXPECT_THROW(gpt2::make_decode_cache(m, 33), gpt2::ModelError);  // n_ctx is 32
  gpt2::DecodeCache cache = gpt2::make_decode_cache(m, 4);
  EXPECT_THROW(gpt2::extend(m, cache, {}, logits.data()), gpt2::ModelError);
  const std::vector<int> bad{1, 97};
  EXPECT_THROW(gpt2::extend(m, cache, bad, logits.data()), gpt2::ModelError);
  EXPECT_EQ(cache.length, 0);
  const std::vector<int> five{1, 2, 3, 4, 5};
  EXPECT_THROW(gpt2::extend(m, cache, five, logits.data()), gpt2::ModelError);
  gpt2::extend(m, cache, std::span<const int>(five).first(4), logits.data());
  EXPECT_THROW(gpt2::extend(m, cache, std::span<const int>(five).first(1), logits.data()),
               gpt2::ModelError);  // full
}

}  // namespace
