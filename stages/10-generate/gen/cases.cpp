// Cases of stage generate: greedy generation with the learner's cache, on GPT-2 small.
//
// The generator proves while it writes them:
//  * the tokens are those of the model's own generation loop (gpt2::generate over
//    gpt2::extend, model/generate.hpp) with its greedy sampler, and every step's logits
//    equal Model::forward's row of the same position, bit for bit;
//  * the cache holds the prompt and every new token but the last, equal to a fresh prefill
//    of them, and each of those positions went through every layer exactly once;
//  * on_token saw every token, in order;
//  * a continuation from a saved prefix equals a fresh generation from prefix + suffix
//    (tokens, logits and cache), and the saved prefix's cache is as save_prefix left it.
// The fixture keeps the tokens as they are, and the logits and caches as digests.
#include <algorithm>
#include <cstring>

#include "gen/builders.hpp"
#include "gen/cases.hpp"
#include "gen/decode_weights.hpp"
#include "generate.hpp"
#include "runner/weights.hpp"

namespace course {

namespace {

void require_same_tensor(const json& a, const json& b, const std::string& what) {
  const Tensor x = tensor_from_json(a), y = tensor_from_json(b);
  require(x.shape == y.shape && same_bits(x.data, y.data.data(), y.data.size()), what);
}

// The model's own greedy generation: gpt2::generate over its cached loop.
std::vector<int> model_generation(const gpt2::Model& model, const std::vector<int>& prompt, int n) {
  std::vector<int> tokens;
  gpt2::Sampler greedy({});
  const gpt2::Decoder decoder = gpt2::cached_decoder(model, int(prompt.size()) + n);
  gpt2::generate(decoder, prompt, n, greedy, -1, [&tokens](int t) { tokens.push_back(t); });
  return tokens;
}

// Checks one generation (its tokens, logits and cache: generated_json of
// stages/10-generate/grader/bindings.cpp) from `context` (what the cache held before + the prompt).
void require_generation(const json& run, const std::vector<int>& context, int n,
                        const std::string& who, const json& weights = decode_weights_spec()) {
  const gpt2::Model& model = model_for(weights);
  const size_t vocab = size_t(model.config().vocab);
  const std::vector<int> tokens = run.at("tokens").get<std::vector<int>>();
  require(tokens == model_generation(model, context, n),
          who + "'s tokens are gpt2::generate's, greedy");
  std::vector<int> seen = concat(context, std::vector<int>(tokens.begin(), tokens.end() - 1));
  const std::vector<float> forward = model.forward(seen);  // [seen, vocab]
  require(same_bits(tensor_from_json(run.at("logits")).data,
                    forward.data() + (context.size() - 1) * vocab, size_t(n) * vocab),
          who + "'s logits equal Model::forward's rows of the same positions");
  const json fresh =
      run_adapter("run_prefill", {{"weights", weights}, {"chunks", json::array({json(seen)})}});
  require(run.at("cache_shapes") == fresh.at("cache_shapes"),
          who + "'s cache has the shape of a fresh prefill");
  for (const char* name : {"keys", "values"})
    require_same_tensor(run.at(name), fresh.at(name),
                        who + "'s cache " + name + " equal a fresh prefill's");
}

// What every generation case checks once its own checks passed, and what it expects: the
// stream is the tokens, the work is one row per position fed (the prompt, then each new
// token but the last), and the cache's digest.
json checked_generation(const json& out, const std::vector<int>& prompt, int n) {
  require(out.at("streamed") == out.at("tokens"),
          "on_token was called with every token, in order");
  require_work(out.at("work"), int64_t(prompt.size()) + n - 1);
  json expected = digest_cache(out);
  expected["work"] = expected_work(out.at("work"));
  return expected;
}

}  // namespace

CaseSpec generate_case(std::string name, std::string checks, std::vector<int> prompt, int n) {
  json input = {{"weights", decode_weights_spec()}, {"prompt", prompt}, {"max_new_tokens", n}};
  auto finalize = [prompt, n](const json& out) {
    require_generation(out, prompt, n, "the generation");
    return checked_generation(out, prompt, n);
  };
  return {"generate", std::move(name), std::move(checks), "run_generate", input, finalize};
}

// Greedy's rule on ties. `from` is the token the model chooses first after `prompt`; `to`
// is the next id above it that the prompt does not hold. On the same weights with `to`'s
// embedding row a copy of `from`'s ("copy_token"), the two tie exactly after any context
// (their logits are the same sum of the same products), the prompt is embedded as before,
// so the first choice is a tie between the largest logits, which the lowest id, `from`,
// wins.
CaseSpec tie_case(std::string name, std::vector<int> prompt, int n) {
  const gpt2::Model& base = model_for(decode_weights_spec());
  const int from = model_generation(base, prompt, 1).front();
  int to = from + 1;
  while (std::find(prompt.begin(), prompt.end(), to) != prompt.end()) ++to;
  require(to < base.config().vocab, "the tie case has a token id above the first choice");
  json weights = decode_weights_spec();
  weights["copy_token"] = {{"from", from}, {"to", to}};
  const std::string a = std::to_string(from), b = std::to_string(to);
  std::string checks = "Token " + b + "'s embedding row is a copy of token " + a +
                       "'s, so the first choice is an exact tie between the largest logits, " + a +
                       " and " + b + ": greedy takes the lowest id, " + a + ", and " +
                       (n == 2 ? std::string("one more token follows")
                               : std::to_string(n - 1) + " more tokens follow") +
                       " from it.";
  json input = {{"weights", weights}, {"prompt", prompt}, {"max_new_tokens", n}};
  auto finalize = [prompt, n, from, to, weights](const json& out) {
    require_generation(out, prompt, n, "the tie generation", weights);
    const Tensor logits = tensor_from_json(out.at("logits"));
    const float* row = logits.data.data();  // step 0
    const size_t vocab = size_t(model_for(weights).config().vocab);
    uint32_t x = 0, y = 0;
    std::memcpy(&x, row + from, 4);
    std::memcpy(&y, row + to, 4);
    require(x == y, "the tied tokens' logits have the same bits");
    for (size_t j = 0; j < vocab; ++j)
      require(!(row[j] > row[from]), "the tied tokens hold the largest logit");
    require(out.at("tokens").at(0) == from, "greedy chose the lower of the tied ids");
    return checked_generation(out, prompt, n);
  };
  return {"generate", std::move(name), std::move(checks), "run_generate", input, finalize};
}

CaseSpec continue_case(std::string name, std::string checks, std::vector<int> prefix,
                       std::vector<std::vector<int>> suffixes, int n) {
  json input = {{"weights", decode_weights_spec()},
                {"prefix", prefix},
                {"suffixes", suffixes},
                {"max_new_tokens", n}};
  auto finalize = [prefix, suffixes, n](const json& out) {
    int64_t new_positions = int64_t(prefix.size());
    json expected = out;
    for (size_t i = 0; i < suffixes.size(); ++i) {
      const std::string who = "continuation " + std::to_string(i);
      require_generation(out.at("continued").at(i), concat(prefix, suffixes[i]), n, who);
      const json fresh = run_adapter("run_generate", {{"weights", decode_weights_spec()},
                                                      {"prompt", concat(prefix, suffixes[i])},
                                                      {"max_new_tokens", n}});
      require(out["continued"][i]["tokens"] == fresh["tokens"],
              who + "'s tokens equal a fresh generation's");
      require_same_tensor(out["continued"][i]["logits"], fresh["logits"],
                          who + "'s logits equal a fresh generation's");
      new_positions += int64_t(suffixes[i].size()) + n - 1;
      expected["continued"][i] = digest_cache(out["continued"][i]);
    }
    const json saved = run_adapter("run_prefill", {{"weights", decode_weights_spec()},
                                                   {"chunks", json::array({json(prefix)})}});
    for (const char* name : {"keys", "values"})
      require_same_tensor(
          out["saved"][name], saved[name],
          std::string("the saved prefix's ") + name + " are as save_prefix left them");
    require_work(out.at("work"), new_positions);
    expected["saved"] = digest_cache(out["saved"]);
    expected["work"] = expected_work(out.at("work"));
    return expected;
  };
  return {"generate", std::move(name), std::move(checks), "run_generate_from", input, finalize};
}

namespace stage_generate {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  // Token ids are GPT-2's ("In the beginning was", "The quick brown fox jumps"); the weights
  // are synthetic, so the text they make is not English.
  const std::vector<int> beginning = {818, 262, 3726, 373}, quick = {464, 2068, 7586, 21831, 18045};
  cases.push_back(generate_case(
      "01-one-new-token",
      "One new token: the prefill's logits choose it, and no decode step runs, so the "
      "cache holds the prompt alone.",
      quick, 1));
  cases.push_back(generate_case(
      "02-four-new-tokens",
      "Four new tokens: each of the three decode steps feeds the token just chosen, and "
      "the fourth is never fed back.",
      {464, 2068, 7586}, 4));
  cases.push_back(generate_case(
      "03-from-end-of-text",
      "A prompt of one token, <|endoftext|>, as GPT-2 starts from nothing: three tokens.", {50256},
      3));
  cases.push_back(generate_case(
      "04-six-new-tokens",
      "Six new tokens, each step costing one position through every layer: the tokens "
      "and every step's logits are the reference's.",
      beginning, 6));
  cases.push_back(continue_case(
      "05-continue-a-saved-prefix",
      "A saved 5-token prefix continued by two prompts, three tokens each: each equals a "
      "fresh generation from prefix + suffix, and the saved prefix never changes.",
      quick, {{625, 262, 16931}, {13, 383}}, 3));
  // The only case with a tie: a greedy rule that takes the last maximum passes every other.
  cases.push_back(tie_case("06-a-tie-goes-to-the-lowest-id", {464, 2068, 7586}, 2));
  return cases;
}

}  // namespace stage_generate

}  // namespace course
