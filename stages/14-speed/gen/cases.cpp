// Cases of stage speed: greedy generation after a long made-up past, the learner's cache
// and attention doing most of a step's work beside the weights.
//
// The generator proves while it writes them:
//  * the tokens and every step's logits are those of the model's own cached loop
//    (gpt2::extend, model/generate.hpp) on a cache holding the same past, bit for bit:
//    the loop the grader times the learner's against;
//  * the positions after the past (the prompt and every new token but the last) hold the
//    keys and values of that loop's cache, bit for bit;
//  * every layer took each of those positions once, and the past went through no layer.
// The fixture keeps the tokens as they are, the logits and the new positions as digests.
#include <algorithm>
#include <cstring>

#include "course/speed.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "generate.hpp"
#include "runner/weights.hpp"
#include "speed_cases.hpp"

namespace course::stage_speed {

namespace {

// The model's own loop on the case: its tokens, each step's logits, and its cache.
struct ModelRun {
  std::vector<int> tokens;
  std::vector<float> logits;  // [n, vocab]
  gpt2::DecodeCache cache;
};

ModelRun model_run(const gpt2::Model& model, int past, uint64_t past_seed, const std::vector<int>& prompt,
                   int n) {
  ModelRun run;
  run.cache = gpt2::make_decode_cache(model, past + int(prompt.size()) + n);
  for (int l = 0; l < n_layers; ++l)
    for (int pos = 0; pos < past; ++pos)
      for (int i = 0; i < d_model; ++i) {
        run.cache.k[size_t(l)][size_t(pos) * d_model + size_t(i)] = past_value(past_seed, l, pos, i, false);
        run.cache.v[size_t(l)][size_t(pos) * d_model + size_t(i)] = past_value(past_seed, l, pos, i, true);
      }
  run.cache.length = past;
  const size_t vocab = size_t(model.config().vocab);
  std::vector<float> logits(vocab);
  gpt2::extend(model, run.cache, prompt, logits.data());
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      const int token = run.tokens.back();
      gpt2::extend(model, run.cache, std::span<const int>(&token, 1), logits.data());
    }
    run.tokens.push_back(gpt2::argmax(logits));
    run.logits.insert(run.logits.end(), logits.begin(), logits.end());
  }
  return run;
}

}  // namespace

CaseSpec speed_case(std::string name, std::string checks, int past, uint64_t past_seed,
                    std::vector<int> prompt, int n, bool timed) {
  json input = {{"weights", decode_weights_spec()},
                {"past", past},
                {"past_seed", past_seed},
                {"prompt", prompt},
                {"max_new_tokens", n}};
  if (timed) input["timed"] = true;
  auto finalize = [past, past_seed, prompt, n](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const ModelRun run = model_run(model, past, past_seed, prompt, n);
    require(out.at("tokens").get<std::vector<int>>() == run.tokens,
            "the tokens are those of the model's own cached loop");
    const Tensor logits = tensor_from_json(out.at("logits"));
    require(logits.data.size() == run.logits.size() &&
                same_bits(logits.data, run.logits.data(), run.logits.size()),
            "every step's logits equal the model's own loop's, bit for bit");
    const int tail = int(prompt.size()) + n - 1;  // positions after the past
    require(out.at("cache_lengths") == json(std::vector<int>(n_layers, past + tail)),
            "every layer holds the past, the prompt and every new token but the last");
    for (const char* name : {"keys", "values"}) {
      const Tensor t = tensor_from_json(out.at(name));  // [layer, head, pos, dim] after the past
      const bool keys = std::strcmp(name, "keys") == 0;
      bool same = t.data.size() == size_t(n_layers) * d_model * size_t(tail);
      for (int l = 0; same && l < n_layers; ++l)
        for (int h = 0; same && h < n_heads; ++h)
          for (int p = 0; same && p < tail; ++p) {
            const float* want = (keys ? run.cache.k : run.cache.v)[size_t(l)].data() +
                                size_t(past + p) * d_model + size_t(h) * head_dim;
            const float* got = t.data.data() + ((size_t(l) * n_heads + size_t(h)) * size_t(tail) + size_t(p)) * head_dim;
            same = std::memcmp(want, got, head_dim * sizeof(float)) == 0;
          }
      require(same, std::string("the ") + name + " after the past equal the model's own loop's");
    }
    require_work(out.at("work"), tail);
    json expected = digest_cache(out);
    expected["work"] = expected_work(out.at("work"));
    return expected;
  };
  return {"speed", std::move(name), std::move(checks), "run_speed", input, finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> quick = {464, 2068, 7586};  // "The quick brown"
  cases.push_back(speed_case(
      "01-no-past",
      "No past: a plain generation of three tokens after a three-token prompt, as in stage "
      "generate.",
      0, 0, quick, 3, false));
  cases.push_back(speed_case(
      "02-a-short-past",
      "A past of 40 made-up positions, then a two-token prompt and three new tokens: the "
      "prompt's positions follow the past's, and attention reads all of it.",
      40, 11, {464, 2068}, 3, false));
  // The timed cases: a long past, so that the cache is a fifth of what a step reads, and
  // a one-token prompt, so that every step puts one position through the model.
  const int timed_past = 896;
  const std::vector<std::pair<uint64_t, int>> timed = {
      {101, 464}, {202, 818}, {303, 50256}, {404, 2068}, {505, 7586}};
  for (size_t i = 0; i < timed.size(); ++i)
    cases.push_back(speed_case(
        "0" + std::to_string(i + 3) + "-timed-" + std::to_string(i + 1),
        "Timed, " + std::to_string(i + 1) + " of " + std::to_string(timed.size()) +
            ": a past of " + std::to_string(timed_past) +
            " positions, then a one-token prompt and three tokens fed back: four steps of one "
            "position each. The numbers must be the reference's, and the grader sets the "
            "call's CPU time beside the model's own loop's on the same input.",
        timed_past, timed[i].first, {timed[i].second}, 4, true));
  return cases;
}

}  // namespace course::stage_speed
