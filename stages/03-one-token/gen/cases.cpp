// Cases of stage one-token, and the GPT-2 builders of stages prefill and prefix-reuse
// build on (gen/builders.hpp).
//
// Two kinds of case per stage:
//  * attention probes (attend_one, attend_causal), on one layer's cache that the fixture
//    gives. Two flavours:
//    - one-hot: hand-made keys and one-hot value rows (position j's value row is 1 in dim
//      j of every head, 0 elsewhere), so the attention output of head h is its softmax
//      weights: out[h][j] is the weight the query gives position j. A skipped position, a
//      wrong scale or a wrong mask shows as a weight, not as a far-away logit. q and k are
//      small multiples of 1/4, so every score is exact.
//    - random: q, k and v drawn from a seeded hash, so almost no product or sum is exact
//      and every sum's order shows in the bits: a dot product, softmax or weighted sum
//      written in another order fails here, in the probe of the function that holds it.
//  * GPT-2 small runs (synthetic weights, decode_weights.hpp): logits, the whole cache and
//    the rows the call put through the model (its work). The fixture keeps the logits and
//    the cache's K and V as digests (digest.hpp), and of the work only what must hold:
//    every layer's qkv and finish_block saw each new position exactly once, and
//    Model::forward was not called.
//
// The generator also proves, while it writes the fixtures, what the stages promise: decode
// logits equal the no-cache forward pass at every step; prefill's logits and cache equal
// decode's bit for bit; a continued prefix equals a fresh prefill of prefix + suffix.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "gen/decode_weights.hpp"
#include "wire/digest.hpp"
#include "wire/shape.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "gen/builders.hpp"

namespace course {

namespace {

constexpr int kDModel = shape::kDModel, kHeads = shape::kHeads, kHeadDim = shape::kHeadDim;

json tensor_numbers(std::vector<int64_t> shape, std::vector<std::string> axes,
                    std::vector<float> data) {
  Tensor t;
  t.shape = std::move(shape);
  t.axes = std::move(axes);
  t.data = std::move(data);
  return tensor_to_json(t, TensorEncoding::numbers);
}

}  // namespace

// A probe's cache of n positions and its n_rows query rows.
json probe_input(int n, int n_rows) {
  std::vector<float> keys(size_t(n) * kDModel), values(size_t(n) * kDModel, 0.0f),
      q(size_t(n_rows) * kDModel);
  for (int j = 0; j < n; ++j)
    for (int h = 0; h < kHeads; ++h)
      for (int d = 0; d < kHeadDim; ++d) {
        keys[size_t(j) * kDModel + h * kHeadDim + d] = float((j * 5 + d + 3 * h) % 9 - 4) * 0.25f;
        values[size_t(j) * kDModel + h * kHeadDim + d] = d == j ? 1.0f : 0.0f;
      }
  for (int r = 0; r < n_rows; ++r)
    for (int h = 0; h < kHeads; ++h)
      for (int d = 0; d < kHeadDim; ++d)
        q[size_t(r) * kDModel + h * kHeadDim + d] = float((h * 7 + d * 3 + r * 2) % 11 - 5) * 0.25f;
  json in;
  if (n_rows == 0) {
    q.resize(kDModel);
    for (int h = 0; h < kHeads; ++h)
      for (int d = 0; d < kHeadDim; ++d)
        q[size_t(h) * kHeadDim + d] = float((h * 7 + d * 3) % 11 - 5) * 0.25f;
    in["q"] = tensor_numbers({kDModel}, {"feature"}, q);
  } else {
    in["q"] = tensor_numbers({n_rows, kDModel}, {"row", "feature"}, q);
  }
  in["keys"] = tensor_numbers({n, kDModel}, {"pos", "feature"}, keys);
  in["values"] = tensor_numbers({n, kDModel}, {"pos", "feature"}, values);
  return in;
}

// A float in about [-2, 2) from (seed, index), with no short binary expansion: splitmix64's
// mixing function, 20 bits of it, divided by an odd number.
float hashed_float(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return float(int64_t(z >> 44) - (1 << 19)) / 262143.0f;
}

// A random probe: n cached positions and n_rows query rows (0: one query, [768]).
json random_probe_input(uint64_t seed, int n, int n_rows) {
  std::vector<float> keys(size_t(n) * kDModel), values(size_t(n) * kDModel),
      q(size_t(std::max(n_rows, 1)) * kDModel);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = hashed_float(seed, i);
  for (size_t i = 0; i < values.size(); ++i) values[i] = hashed_float(seed + 1, i);
  for (size_t i = 0; i < q.size(); ++i) q[i] = hashed_float(seed + 2, i);
  json in;
  in["q"] = n_rows == 0 ? tensor_numbers({kDModel}, {"feature"}, q)
                        : tensor_numbers({n_rows, kDModel}, {"row", "feature"}, q);
  in["keys"] = tensor_numbers({n, kDModel}, {"pos", "feature"}, keys);
  in["values"] = tensor_numbers({n, kDModel}, {"pos", "feature"}, values);
  return in;
}

namespace {

Tensor tensor_of(const json& j) { return tensor_from_json(j); }

}  // namespace

// Of a run's work, what must hold: rows through every layer's qkv and finish_block (each
// new position once) and no Model::forward. How many rows were embedded or turned into
// logits is left free (a prefill written as a loop of decode steps makes logits for every
// row, and is right).
json expected_work(const json& work) {
  return {{"qkv_rows", work.at("qkv_rows")},
          {"finish_block_rows", work.at("finish_block_rows")},
          {"forward_tokens", work.at("forward_tokens")}};
}

void require_work(const json& work, int64_t new_positions) {
  for (const char* name : {"qkv_rows", "finish_block_rows"})
    for (const json& rows : work.at(name))
      require(rows.get<int64_t>() == new_positions,
              std::string("every layer's ") + name + " counts each new position once");
  require(work.at("forward_tokens") == 0, "the run does not call Model::forward");
}

// ---- one token -------------------------------------------------------------------------

CaseSpec attend_one_case(std::string name, std::string checks, int n) {
  return {"one-token",  std::move(name),   std::move(checks),
          "attend_one", probe_input(n, 0), nullptr};
}

CaseSpec random_attend_one_case(std::string name, std::string checks, uint64_t seed, int n) {
  return {"one-token", std::move(name), std::move(checks), "attend_one",
          random_probe_input(seed, n, 0), nullptr};
}

CaseSpec decode_case(std::string name, std::string checks, std::vector<int> tokens) {
  json input = {{"weights", decode_weights_spec()}, {"tokens", tokens}};
  auto finalize = [tokens](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    std::vector<float> forward = model.forward(tokens);  // [T, vocab]
    Tensor logits = tensor_of(out["logits"]);
    require(same_bits(logits.data, forward.data(), forward.size()),
            "decode logits equal Model::forward's");
    require_work(out["work"], int64_t(tokens.size()));
    json expected = digest_cache(out);
    expected["work"] = expected_work(out["work"]);
    return expected;
  };
  return {"one-token", std::move(name), std::move(checks), "run_decode", input, finalize};
}

namespace {

// Token ids are GPT-2's; the weights are synthetic, so they only need to be valid ids.
const std::vector<int> quick = {
    464, 2068, 7586,  21831, 18045,
    625, 262,  16931, 3290,  13};  // "The quick brown fox jumps over the lazy dog."

}  // namespace

namespace stage_one_token {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(attend_one_case("01-attend-one-position",
                                  "With a single cached position every head gives it weight 1, so "
                                  "the output is that position's value row.",
                                  1));
  cases.push_back(attend_one_case("02-attend-seven-positions",
                                  "One query over seven cached positions, unmasked and scaled by "
                                  "1/8: with one-hot value rows each output is a softmax weight.",
                                  7));
  cases.push_back(random_attend_one_case(
      "03-attend-random-values",
      "One query over 23 positions of random keys and values: every dot product, the softmax "
      "and the weighted sum must run in the specified order to give these bits.",
      31, 23));
  cases.push_back(decode_case("04-first-token",
                              "Decoding one token into an empty cache gives Model::forward's "
                              "logits and one position per layer.",
                              {464}));
  cases.push_back(decode_case("05-three-tokens",
                              "Three tokens decoded one at a time: every step's logits equal the "
                              "no-cache forward pass, and each layer holds 3 positions.",
                              {quick.begin(), quick.begin() + 3}));
  // Six steps of `quick`: long enough that a softmax built on glibc 2.36's std::exp gives
  // other bits (first at position 5, layer 5, head 2; the fixture generator refuses the
  // cases if mistake std_exp passes them all). The prefill stage's prompt would need seven.
  cases.push_back(decode_case("06-six-tokens",
                              "Six steps: each new token is at position = cache length and "
                              "attends over every cached position of its layer.",
                              {quick.begin(), quick.begin() + 6}));
  return cases;
}

}  // namespace stage_one_token

}  // namespace course
