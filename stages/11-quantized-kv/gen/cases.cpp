// Cases of stage quantized-kv: blocks quantized and read back (run_q8_blocks), each block
// chosen for one rule of the quantizer, and decodes on a q8_0 cache (run_q8_decode).
//
// The generator proves, while it writes the fixtures, that a decode's cache read back is
// its codes times its scales, and that every new position went through each layer once;
// it measures what the quantization costs against the float cache (the no-cache forward
// pass, which stage one-token's decode equals bit for bit) and says so in the case.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gen/builders.hpp"
#include "q8_cases.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"
#include "wire/digest.hpp"

namespace course::stage_quantized_kv {

namespace {

using Block = std::vector<float>;  // 32 values

json blocks_input(const std::vector<Block>& blocks) {
  Tensor t;
  t.shape = {int64_t(blocks.size()), 32};
  t.axes = {"block", "value"};
  for (const Block& b : blocks) {
    require(b.size() == 32, "a block of the quantizer's cases holds 32 values");
    t.data.insert(t.data.end(), b.begin(), b.end());
  }
  return {{"values", tensor_to_json(t, TensorEncoding::numbers)}};
}

CaseSpec blocks_case(std::string name, std::string checks, const std::vector<Block>& blocks) {
  return {"quantized-kv", std::move(name), std::move(checks), "run_q8_blocks", blocks_input(blocks),
          nullptr};
}

// 32 values of about `magnitude`, hashed from (seed, block).
Block hashed_block(uint64_t seed, int block, float magnitude) {
  Block b(32);
  for (int i = 0; i < 32; ++i) b[size_t(i)] = hashed_float(seed, uint64_t(block) * 32 + uint64_t(i)) * magnitude;
  return b;
}

std::string short_float(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// The largest |a - b| over the logits, and the steps whose largest logit's token differs.
void compare_logits(const std::vector<float>& q8, const std::vector<float>& exact, size_t vocab,
                    double& max_diff, int& argmax_changes) {
  max_diff = 0;
  argmax_changes = 0;
  for (size_t i = 0; i < q8.size(); ++i) max_diff = std::max(max_diff, std::fabs(double(q8[i]) - double(exact[i])));
  for (size_t s = 0; s * vocab < q8.size(); ++s) {
    auto a = std::max_element(q8.begin() + long(s * vocab), q8.begin() + long((s + 1) * vocab));
    auto b = std::max_element(exact.begin() + long(s * vocab), exact.begin() + long((s + 1) * vocab));
    argmax_changes += (a - q8.begin()) - long(s * vocab) != (b - exact.begin()) - long(s * vocab);
  }
}

// The cache read back must be its codes times its scales, value by value.
void require_read_back(const json& out) {
  for (const char* side : {"key", "value"}) {
    const Tensor codes = tensor_from_json(out.at(std::string(side) + "_codes"));
    const Tensor scales = tensor_from_json(out.at(std::string(side) + "_scales"));
    const Tensor rows = tensor_from_json(out.at(std::string(side) + "s"));  // [12, 12, seq, 64]
    const int64_t layers = codes.shape.at(0), seq = codes.shape.at(1);
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t p = 0; p < seq; ++p)
        for (int64_t f = 0; f < 768; ++f) {
          const float want = codes.data[size_t((l * seq + p) * 768 + f)] *
                             scales.data[size_t((l * seq + p) * 24 + f / 32)];
          const int64_t h = f / 64, dim = f % 64;
          const float got = rows.data[size_t(((l * 12 + h) * seq + p) * 64 + dim)];
          require(std::memcmp(&want, &got, sizeof want) == 0,
                  "the cache read back is its codes times its scales");
        }
  }
}

}  // namespace

CaseSpec q8_decode_case(std::string name, std::string checks, std::vector<int> tokens) {
  json input = {{"weights", decode_weights_spec()}, {"tokens", tokens}};
  // What quantizing costs here: these logits against the float cache's.
  const gpt2::Model& model = model_for(decode_weights_spec());
  const Tensor q8 = tensor_from_json(run_adapter("run_q8_decode", input).at("logits"));
  const std::vector<float> exact = model.forward(tokens);
  double max_diff = 0;
  int changes = 0;
  compare_logits(q8.data, exact, size_t(model.config().vocab), max_diff, changes);
  checks += " The q8_0 cache takes 34 of every 128 bytes the float cache takes (26.6%); its "
            "logits differ from the float cache's by at most " +
            short_float(max_diff) + ", and the largest logit's token " +
            (changes == 0 ? std::string(tokens.size() == 1 ? "is the same." : "is the same at every step.")
                          : "changes at " + std::to_string(changes) + " of " +
                                std::to_string(tokens.size()) + " steps.");
  auto finalize = [tokens](const json& out) {
    require_work(out.at("work"), int64_t(tokens.size()));
    require_read_back(out);
    json expected = digest_cache(out);
    for (const char* name : {"key_codes", "value_codes"})
      expected[name] = make_digest(tensor_from_json(out.at(name)), {0, 767}, false);
    expected["work"] = expected_work(out.at("work"));
    return expected;
  };
  return {"quantized-kv", std::move(name), std::move(checks), "run_q8_decode", input, finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  Block zeros(32, 0.0f), ramp(32);
  for (int i = 0; i < 32; ++i) ramp[size_t(i)] = float(i) - 15.5f;
  cases.push_back(blocks_case("01-a-zero-block",
                              "A block of zeros has amax 0, so d is 0 and so is inv (not 1/0): "
                              "scale 0 and every code 0. Then a ramp from -15.5 to 15.5.",
                              {zeros, ramp}));
  // amax 127: d = 1 and inv = 1, so x * inv is x, exactly.
  Block ties = {127.0f, -126.5f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -1.5f, 3.5f, -3.5f, 2.7f,
                -2.7f, 2.2f,  -2.2f,  0.0f, 100.5f, -100.5f, 64.5f, -64.5f, 1.0f, -1.0f, 0.49f,
                -0.49f, 5.5f, 6.5f,  -5.5f, -6.5f, 42.0f, 0.25f, -0.75f, 7.5f, -7.5f};
  cases.push_back(blocks_case("02-ties-away-from-zero",
                              "amax 127 makes d = 1 and inv = 1, so each x * inv is x itself: 2.5 "
                              "becomes 3 and -2.5 becomes -3 (halves away from zero), 2.7 becomes 3.",
                              {ties}));
  Block peak = hashed_block(7, 0, 1.0f), negative = hashed_block(8, 0, 0.5f);
  peak[9] = -3.0f;
  for (float& v : negative) v = -std::fabs(v) - 0.25f;
  cases.push_back(blocks_case("03-the-peak-is-negative",
                              "The largest magnitude is -3.0, so amax is 3.0: the largest "
                              "magnitude, not the largest value. Then a block of negative values only.",
                              {peak, negative}));
  std::vector<Block> mixed;
  const float magnitudes[] = {0.125f, 0.6f, 1.0f, 1.7f, 3.0f, 9.5f, 20.0f, 0.03f};
  for (int b = 0; b < 8; ++b) mixed.push_back(hashed_block(11, b, magnitudes[b]));
  cases.push_back(blocks_case("04-random-blocks",
                              "Eight blocks of random values, amax from about 0.03 to 20: the "
                              "codes come from x * inv, with inv = 1 / d from d as a float, and "
                              "read back with the fp16 scale.",
                              mixed));
  cases.push_back(blocks_case(
      "05-tiny-blocks",
      "amax 1e-5 gives d of about 7.9e-8, a subnormal fp16 scale (2^-24); amax 1e-9 gives a d "
      "below fp16's smallest, so the scale is 0: the codes are still computed, and the block "
      "reads back as zeros.",
      {hashed_block(13, 0, 1e-5f), hashed_block(14, 0, 1e-9f)}));
  cases.push_back(q8_decode_case("06-first-token",
                                 "One token decoded into an empty q8_0 cache: it attends to its own "
                                 "key and value read back from their blocks.",
                                 {464}));
  cases.push_back(q8_decode_case("07-six-tokens",
                                 "Six steps on a q8_0 cache: each step's logits, and every "
                                 "layer's key and value codes and scales.",
                                 {464, 2068, 7586, 21831, 18045, 625}));
  return cases;
}

}  // namespace course::stage_quantized_kv
