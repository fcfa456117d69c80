// Cases of stage prefill: the causal-attention probes and prompts prefilled at once, which
// the generator proves equal decoding them one at a time, bit for bit.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"
#include "wire/digest.hpp"

namespace course {

namespace {

Tensor tensor_of(const json& j) { return tensor_from_json(j); }

// Token ids are GPT-2's; the weights are synthetic, so they only need to be valid ids.
const std::vector<int> quick = {
    464, 2068, 7586,  21831, 18045,
    625, 262,  16931, 3290,  13};  // "The quick brown fox jumps over the lazy dog."

}  // namespace

CaseSpec attend_causal_case(std::string name, std::string checks, int n, int n_rows) {
  return {"prefill",       std::move(name),        std::move(checks),
          "attend_causal", probe_input(n, n_rows), nullptr};
}

CaseSpec random_attend_causal_case(std::string name, std::string checks, uint64_t seed, int n,
                                   int n_rows) {
  return {"prefill",
          std::move(name),
          std::move(checks),
          "attend_causal",
          random_probe_input(seed, n, n_rows),
          nullptr};
}

// Prefills of `chunks`, one after the other, on one cache.
CaseSpec prefill_case(std::string name, std::string checks, std::vector<std::vector<int>> chunks) {
  json input = {{"weights", decode_weights_spec()}, {"chunks", chunks}};
  std::vector<int> tokens;
  for (const auto& c : chunks) tokens.insert(tokens.end(), c.begin(), c.end());
  auto finalize = [tokens, chunks](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    std::vector<float> forward = model.forward(tokens);  // [T, vocab]
    Tensor logits = tensor_of(out["logits"]);            // [n_chunks, vocab]
    size_t end = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      end += chunks[c].size();
      require(same_bits(std::vector<float>(logits.data.begin() + long(c * vocab),
                                           logits.data.begin() + long((c + 1) * vocab)),
                        forward.data() + (end - 1) * vocab, vocab),
              "each chunk's logits equal Model::forward's at the chunk's last position");
    }
    json decoded =
        run_adapter("run_decode", {{"weights", decode_weights_spec()}, {"tokens", tokens}});
    for (const char* name : {"keys", "values"}) {
      Tensor a = tensor_of(out[name]), b = tensor_of(decoded[name]);
      require(a.shape == b.shape && same_bits(a.data, b.data.data(), b.data.size()),
              std::string("prefill's cached ") + name + " equal decode's");
    }
    require_work(out["work"], int64_t(tokens.size()));
    json expected = digest_cache(out);
    expected["work"] = expected_work(out["work"]);
    return expected;
  };
  return {"prefill", std::move(name), std::move(checks), "run_prefill", input, finalize};
}

namespace stage_prefill {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(attend_causal_case("01-causal-six-rows",
                                     "Six query rows over six positions: row i gives weight only "
                                     "to positions 0 .. i, including itself.",
                                     6, 6));
  cases.push_back(
      attend_causal_case("02-causal-after-cached",
                         "Three query rows at positions 5, 6, 7 of an 8-position cache: each sees "
                         "the earlier cache and itself, nothing later.",
                         8, 3));
  cases.push_back(random_attend_causal_case(
      "03-causal-random-values",
      "Five query rows, the last five of 19 positions of random keys and values: each row's "
      "attention, in the specified order, over the positions up to its own.",
      47, 19, 5));
  cases.push_back(prefill_case(
      "04-one-token", "A one-token prompt: prefill equals a single decode step.", {{464}}));
  cases.push_back(prefill_case("05-five-tokens",
                               "Five tokens in one batch: last logits and the whole cache equal "
                               "decoding them one at a time, bit for bit.",
                               {{quick.begin(), quick.begin() + 5}}));
  cases.push_back(prefill_case(
      "06-sixteen-tokens",
      "Sixteen tokens with a repeated word: the causal mask keeps every row from seeing later "
      "positions.",
      {{464, 3290, 318, 257, 3290, 13, 383, 3290, 318, 922, 13, 632, 318, 262, 3290, 13}}));
  cases.push_back(prefill_case(
      "07-after-a-first-prefill",
      "A second prefill on a cache that already holds 5 positions: its rows are positions 5, "
      "6, 7 and attend to the cached ones too.",
      {{quick.begin(), quick.begin() + 5}, {quick.begin() + 5, quick.begin() + 8}}));
  return cases;
}

}  // namespace stage_prefill

}  // namespace course
