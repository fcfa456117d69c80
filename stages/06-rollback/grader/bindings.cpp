// Bindings for stage rollback's speculative runs (its crop plans go through
// run_cache_plan, the cache structure's bindings).
//
//   input   {"weights", "prompt": [ids], "rounds": [{"draft": [ids], "accepted": j, "next": id}]}
//   output  {"logits": [n_rounds, vocab], "cache": {...}, "prompt_cache": {...}}
//           (caches as cache_json: shape rows, and K and V [12, 12, seq, 64])
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"

namespace course {

namespace {

std::vector<SpecRound> rounds_field(const json& input, const gpt2::Model& model) {
  const json& list = field(input, "rounds");
  if (!list.is_array() || list.empty()) throw BadInput("\"rounds\" must be a non-empty list");
  std::vector<SpecRound> rounds;
  for (const json& r : list) {
    SpecRound round;
    round.draft = tokens_field(r, "draft", model, true);
    const json& accepted = field(r, "accepted");
    if (!accepted.is_number_integer() || accepted.get<int64_t>() < 0 ||
        accepted.get<int64_t>() > int64_t(round.draft.size()))
      throw BadInput("\"accepted\" must be a count from 0 to the number of draft tokens");
    round.accepted = accepted.get<int>();
    round.next = tokens_field(json{{"next", json::array({field(r, "next")})}}, "next", model, false)[0];
    rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace

namespace stage_rollback {

void register_adapters(AdapterTable& table) {
  table["run_speculative"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    std::vector<int> prompt = tokens_field(input, "prompt", model, false);
    std::vector<SpecRound> rounds = rounds_field(input, model);
    SpecRun run = run_speculative(model, prompt, rounds);
    json out;
    out["logits"] = logits_json(run.logits, int64_t(rounds.size()), true);
    out["cache"] = cache_json(run.cache);
    out["prompt_cache"] = cache_json(run.prompt_cache);
    return out;
  };
}

}  // namespace stage_rollback

}  // namespace course
