// Cases of stage prefix-cache, on GPT-2 small, and the token helpers of the server stages
// (gen/builders.hpp).
//
// The generator proves while it writes them: every request's logits equal those of the
// request run alone with no cache, Model::forward's, bit for bit. The bookkeeping (which
// blocks are cached and evicted) is what the reference did; the lesson gives the rules
// that fix it.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"

namespace course {

// n token ids from a small generator: valid ids, distinct enough that prompts only share
// what a case makes them share.
std::vector<int> words(uint32_t seed, int n) {
  std::vector<int> out;
  uint32_t x = seed * 2654435761u + 12345u;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    out.push_back(int(256 + (x >> 8) % 30000));
  }
  return out;
}

std::vector<int> slice(const std::vector<int>& v, size_t from, size_t to) {
  return std::vector<int>(v.begin() + std::ptrdiff_t(from), v.begin() + std::ptrdiff_t(to));
}

CaseSpec trace_case(std::string name, std::string checks, int n_blocks, std::vector<std::vector<int>> prompts) {
  json input = {{"weights", decode_weights_spec()}, {"n_blocks", n_blocks}, {"prompts", prompts}};
  auto finalize = [prompts](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    json expected = out;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::vector<float> f = model.forward(prompts[i]);
      require(same_bits(tensor_from_json(out["requests"][i]["logits"]).data, f.data() + f.size() - vocab, vocab),
              "request " + std::to_string(i) + "'s logits equal Model::forward's of its prompt");
      expected["requests"][i]["logits"] = digest_logits(out["requests"][i]["logits"]);
    }
    return expected;
  };
  return {"prefix-cache", std::move(name), std::move(checks), "run_prefix_trace", input, finalize};
}

namespace stage_prefix_cache {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(1, 48), b = words(2, 48), c = words(3, 48), d = words(4, 48);
  cases.push_back(trace_case("01-no-shared-prefix",
                             "Two unrelated 17-token prompts: nothing is served from the cache, and each "
                             "leaves its one full block cached.",
                             8, {slice(a, 0, 17), slice(b, 0, 17)}));
  cases.push_back(trace_case("02-shared-prefix",
                             "A 35-token prompt, then one sharing its first 32 tokens: the second takes 32 "
                             "tokens (2 blocks) from the cache and computes 3.",
                             8, {slice(a, 0, 35), concat(slice(a, 0, 32), slice(b, 0, 3))}));
  cases.push_back(trace_case("03-whole-prompt-cached",
                             "The same 32-token prompt twice: the second reuses one block, not two, because "
                             "its last token must go through the model.",
                             8, {slice(a, 0, 32), slice(a, 0, 32)}));
  cases.push_back(trace_case("04-same-tokens-other-past",
                             "Two prompts whose second blocks hold the same 16 tokens after different first "
                             "blocks: nothing is shared, because a key covers the whole past.",
                             8, {concat(slice(a, 0, 16), slice(c, 0, 17)), concat(slice(b, 0, 16), slice(c, 0, 17))}));
  cases.push_back(trace_case("05-evict-least-recently-used",
                             "A pool of 5 blocks: three prompts fill it, and the fourth evicts a block of "
                             "the prompt used longest ago, its deepest block first.",
                             5, {slice(a, 0, 33), slice(b, 0, 33), slice(a, 0, 33), slice(c, 0, 17),
                                 slice(b, 0, 17)}));
  cases.push_back(trace_case("06-never-evict-a-block-in-use",
                             "A pool of 4 blocks: a request that reuses 2 cached blocks and needs 2 more must "
                             "evict other blocks, never the ones it is using.",
                             4, {slice(d, 0, 33), slice(a, 0, 17), concat(slice(d, 0, 32), slice(b, 0, 17))}));
  return cases;
}

}  // namespace stage_prefix_cache

}  // namespace course
