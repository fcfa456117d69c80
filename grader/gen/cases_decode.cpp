// Cases of stages one-token, prefill and prefix-reuse.
//
// Two kinds of case per stage:
//  * attention probes (attend_one, attend_causal): one layer's cache with hand-made keys
//    and one-hot value rows (position j's value row is 1 in dim j of every head, 0
//    elsewhere), so the attention output of head h is its softmax weights: out[h][j] is
//    the weight the query gives position j. A skipped position, a missing scale or a
//    wrong mask shows as a weight, not as a far-away logit. q and k are small multiples of
//    1/4, so every score is exact.
//  * GPT-2 small runs (synthetic weights, decode_weights.hpp): logits and the whole cache.
//    The fixture keeps the logits and the cache's K and V as digests (digest.hpp).
//
// The generator also proves, while it writes the fixtures, what the stages promise: decode
// logits equal the no-cache forward pass at every step; prefill's logits and cache equal
// decode's bit for bit; a continued prefix equals a fresh prefill of prefix + suffix.
#include <cstring>
#include <stdexcept>

#include "gen/decode_weights.hpp"
#include "wire/digest.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "gen/cases.hpp"

namespace course {

namespace {

constexpr int kDModel = 768, kHeads = 12, kHeadDim = 64;

json tensor_numbers(std::vector<int64_t> shape, std::vector<std::string> axes,
                    std::vector<float> data) {
  Tensor t;
  t.shape = std::move(shape);
  t.axes = std::move(axes);
  t.data = std::move(data);
  return tensor_to_json(t, TensorEncoding::numbers);
}

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

Tensor tensor_of(const json& j) { return tensor_from_json(j); }

bool same_bits(const std::vector<float>& a, const float* b, size_t n) {
  return a.size() == n && std::memcmp(a.data(), b, n * sizeof(float)) == 0;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("the reference breaks a promise of the course: " + what);
}

json run_adapter(const std::string& name, const json& input) {
  return adapter_table().at(name)(input);
}

// Logits and cache tensors of an output, as digests.
json digest_logits(const json& t) {
  return make_digest(tensor_of(t), spread_indices(tensor_of(t).shape.back(), 32), true);
}
json digest_kv(const json& t) { return make_digest(tensor_of(t), {0, kHeadDim - 1}, false); }

json digest_cache(json out) {
  out["keys"] = digest_kv(out["keys"]);
  out["values"] = digest_kv(out["values"]);
  if (out.contains("logits")) out["logits"] = digest_logits(out["logits"]);
  return out;
}

std::vector<int> concat(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// ---- stage one-token -------------------------------------------------------------------

CaseSpec attend_one_case(std::string name, std::string checks, int n) {
  return {"one-token",  std::move(name),   std::move(checks),
          "attend_one", probe_input(n, 0), nullptr};
}

CaseSpec decode_case(std::string name, std::string checks, std::vector<int> tokens) {
  json input = {{"weights", decode_weights_spec()}, {"tokens", tokens}};
  auto finalize = [tokens](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    std::vector<float> forward = model.forward(tokens);  // [T, vocab]
    Tensor logits = tensor_of(out["logits"]);
    require(same_bits(logits.data, forward.data(), forward.size()),
            "decode logits equal Model::forward's");
    return digest_cache(out);
  };
  return {"one-token", std::move(name), std::move(checks), "run_decode", input, finalize};
}

// ---- stage prefill ---------------------------------------------------------------------

CaseSpec attend_causal_case(std::string name, std::string checks, int n, int n_rows) {
  return {"prefill",       std::move(name),        std::move(checks),
          "attend_causal", probe_input(n, n_rows), nullptr};
}

CaseSpec prefill_case(std::string name, std::string checks, std::vector<int> tokens) {
  json input = {{"weights", decode_weights_spec()}, {"tokens", tokens}};
  auto finalize = [tokens, input](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    std::vector<float> forward = model.forward(tokens);  // [T, vocab]
    Tensor logits = tensor_of(out["logits"]);
    require(same_bits(logits.data, forward.data() + forward.size() - vocab, vocab),
            "prefill logits equal Model::forward's");
    json decoded = run_adapter("run_decode", input);
    Tensor dl = tensor_of(decoded["logits"]);
    require(same_bits(logits.data, dl.data.data() + dl.data.size() - vocab, vocab),
            "prefill logits equal decode's");
    for (const char* name : {"keys", "values"}) {
      Tensor a = tensor_of(out[name]), b = tensor_of(decoded[name]);
      require(a.shape == b.shape && same_bits(a.data, b.data.data(), b.data.size()),
              std::string("prefill's cached ") + name + " equal decode's");
    }
    return digest_cache(out);
  };
  return {"prefill", std::move(name), std::move(checks), "run_prefill", input, finalize};
}

// ---- stage prefix-reuse ----------------------------------------------------------------

CaseSpec reuse_case(std::string name, std::string checks, std::vector<int> prefix,
                    std::vector<std::vector<int>> suffixes) {
  json input = {{"weights", decode_weights_spec()}, {"prefix", prefix}, {"suffixes", suffixes}};
  auto finalize = [prefix, suffixes](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    std::vector<float> fp = model.forward(prefix);
    require(same_bits(tensor_of(out["prefix_logits"]).data, fp.data() + fp.size() - vocab, vocab),
            "the saved prefix's logits equal Model::forward's");
    json expected = out;
    expected["prefix_logits"] = digest_logits(out["prefix_logits"]);
    expected["saved"] = digest_cache(out["saved"]);
    for (size_t i = 0; i < suffixes.size(); ++i) {
      std::vector<int> all = concat(prefix, suffixes[i]);
      json fresh =
          run_adapter("run_prefill", {{"weights", decode_weights_spec()}, {"tokens", all}});
      std::vector<float> f = model.forward(all);
      const json& c = out["continued"][i];
      require(same_bits(tensor_of(c["logits"]).data, f.data() + f.size() - vocab, vocab),
              "a continued prefix's logits equal Model::forward's of prefix + suffix");
      for (const char* name : {"logits", "keys", "values"}) {
        Tensor a = tensor_of(c[name]), b = tensor_of(fresh[name]);
        require(a.shape == b.shape && same_bits(a.data, b.data.data(), b.data.size()),
                std::string("a continued prefix's ") + name + " equal a fresh prefill's");
      }
      expected["continued"][i] = digest_cache(c);
    }
    return expected;
  };
  return {"prefix-reuse", std::move(name), std::move(checks), "run_prefix_reuse", input, finalize};
}

}  // namespace

std::vector<CaseSpec> decode_cases() {
  std::vector<CaseSpec> cases;
  // Token ids are GPT-2's; the weights are synthetic, so they only need to be valid ids.
  const std::vector<int> quick = {
      464, 2068, 7586,  21831, 18045,
      625, 262,  16931, 3290,  13};  // "The quick brown fox jumps over the lazy dog."

  // ---- stage one-token
  cases.push_back(attend_one_case("01-attend-one-position",
                                  "With a single cached position every head gives it weight 1, so "
                                  "the output is that position's value row.",
                                  1));
  cases.push_back(attend_one_case("02-attend-seven-positions",
                                  "One query over seven cached positions, unmasked and scaled by "
                                  "1/8: with one-hot value rows each output is a softmax weight.",
                                  7));
  cases.push_back(decode_case("03-first-token",
                              "Decoding one token into an empty cache gives Model::forward's "
                              "logits and one position per layer.",
                              {464}));
  cases.push_back(decode_case("04-three-tokens",
                              "Three tokens decoded one at a time: every step's logits equal the "
                              "no-cache forward pass, and each layer holds 3 positions.",
                              {quick.begin(), quick.begin() + 3}));
  cases.push_back(decode_case("05-six-tokens",
                              "Six steps: each new token is at position = cache length and attends "
                              "over every cached position of its layer.",
                              {quick.begin(), quick.begin() + 6}));

  // ---- stage prefill
  cases.push_back(attend_causal_case("01-causal-six-rows",
                                     "Six query rows over six positions: row i gives weight only "
                                     "to positions 0 .. i, including itself.",
                                     6, 6));
  cases.push_back(
      attend_causal_case("02-causal-after-cached",
                         "Three query rows at positions 5, 6, 7 of an 8-position cache: each sees "
                         "the earlier cache and itself, nothing later.",
                         8, 3));
  cases.push_back(prefill_case("03-one-token",
                               "A one-token prompt: prefill equals a single decode step.", {464}));
  cases.push_back(prefill_case("04-five-tokens",
                               "Five tokens in one batch: last logits and the whole cache equal "
                               "decoding them one at a time, bit for bit.",
                               {quick.begin(), quick.begin() + 5}));
  cases.push_back(prefill_case(
      "05-sixteen-tokens",
      "Sixteen tokens with a repeated word: the causal mask keeps every row from seeing later "
      "positions.",
      {464, 3290, 318, 257, 3290, 13, 383, 3290, 318, 922, 13, 632, 318, 262, 3290, 13}));

  // ---- stage prefix-reuse
  const std::vector<int> prefix = {464, 2068, 7586, 21831, 18045, 625};
  cases.push_back(reuse_case("01-one-suffix-6-reused",
                             "A 6-token prefix saved once and continued by one token: 6 positions "
                             "reused instead of recomputed.",
                             prefix, {{262}}));
  cases.push_back(reuse_case("02-three-suffixes-18-reused",
                             "Three suffixes (1, 2 and 3 tokens) continue the same saved 6-token "
                             "prefix: 18 positions reused, and the saved cache never changes.",
                             prefix, {{262}, {262, 16931}, {617, 3290, 13}}));
  cases.push_back(reuse_case("03-same-suffix-twice-16-reused",
                             "The same suffix continued twice from one saved 8-token prefix gives "
                             "identical results: 16 positions reused.",
                             {464, 3290, 318, 257, 3290, 13, 383, 3290}, {{318, 922}, {318, 922}}));
  return cases;
}

}  // namespace course
