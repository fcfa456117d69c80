// Bindings for stage generate: greedy generation with the learner's cache.
//
// run_generate
//   input   {"weights", "prompt": [ids], "max_new_tokens": N}
//   output  {"tokens": [N ids], "streamed": [the ids on_token was called with, in order],
//            "logits": [N, vocab], "cache_shapes", "keys", "values", "work"}
// run_generate_from
//   input   {"weights", "prefix": [ids], "suffixes": [[ids], ...], "max_new_tokens": N}
//   output  {"saved": {"cache_shapes", "keys", "values"},
//            "continued": [{"tokens", "logits": [N, vocab], "cache_shapes", "keys", "values"}],
//            "work"}
// (caches as cache_json, work as work_json: bindings.hpp)
#include <algorithm>
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course {

namespace {

// "max_new_tokens", checked so that `positions` tokens before it and every new token but
// the last fit in the model's context.
int new_tokens_field(const json& input, const gpt2::Model& model, int64_t positions) {
  const json& n = field(input, "max_new_tokens");
  if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > kMaxNewTokens)
    throw BadInput("\"max_new_tokens\" must be a whole number from 1 to " +
                   std::to_string(kMaxNewTokens));
  if (positions + n.get<int64_t>() - 1 > model.config().n_ctx)
    throw BadInput(std::to_string(positions) + " prompt positions and " +
                   std::to_string(n.get<int64_t>()) + " new tokens do not fit in the model's " +
                   std::to_string(model.config().n_ctx) + " positions");
  return n.get<int>();
}

json generated_json(const GenerateRun& run, int max_new_tokens) {
  json out = cache_json(run.cache);
  out["tokens"] = run.generated.tokens;
  out["logits"] = logits_json(run.generated.logits, max_new_tokens, true, "step");
  return out;
}

}  // namespace

namespace stage_generate {

void register_adapters(AdapterTable& table) {
  table["run_generate"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const std::vector<int> prompt = tokens_field(input, "prompt", model, false);
    const int n = new_tokens_field(input, model, int64_t(prompt.size()));
    std::vector<int> streamed;
    model.reset_work();
    GenerateRun run =
        run_generate(model, prompt, n, [&streamed](int token) { streamed.push_back(token); });
    const gpt2::WorkCounts work = model.work();
    json out = generated_json(run, n);
    out["streamed"] = streamed;
    out["work"] = work_json(work);
    return out;
  };
  table["run_generate_from"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const std::vector<int> prefix = tokens_field(input, "prefix", model, false);
    const json& list = field(input, "suffixes");
    if (!list.is_array() || list.empty() || list.size() > size_t(kMaxRequests))
      throw BadInput("\"suffixes\" must be a list of 1 to " + std::to_string(kMaxRequests) +
                     " token lists");
    std::vector<std::vector<int>> suffixes;
    size_t longest = 0;
    for (const json& s : list) {
      suffixes.push_back(tokens_field(json{{"suffix", s}}, "suffix", model, false));
      longest = std::max(longest, suffixes.back().size());
    }
    const int n = new_tokens_field(input, model, int64_t(prefix.size() + longest));
    model.reset_work();
    ContinuedRun run = run_generate_from(model, prefix, suffixes, n);
    const gpt2::WorkCounts work = model.work();
    json continued = json::array();
    for (const GenerateRun& c : run.continued) continued.push_back(generated_json(c, n));
    return json{{"saved", cache_json(run.saved.cache)},
                {"continued", continued},
                {"work", work_json(work)}};
  };
}

}  // namespace stage_generate

}  // namespace course
