// What the grader knows of stage one-token's adapters beyond their input forms
// (judge/adapter_rules.hpp): the attention probe's localizer, and the decode's localizer
// and work (one row per token through every layer).
#include "judge/work.hpp"

namespace course::stage_one_token {

namespace {

const WorkRules kDecodeWork = {
    .positions_story = tokens_story,
    .learner_held = held_by_fresh_cache,
    .note =
        [](const Fixture&, int64_t n) {
          return each_layer_took(n) + ", one per token" +
                 (n > 1 ? "; without a cache, step t would recompute all t + 1 positions: " +
                              std::to_string(n * (n + 1) / 2) + " rows per layer"
                        : "");
        },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "attend_one", .localize = localize_probe},
      {.name = "run_decode", .localize = localize_gpt2_run, .work = &kDecodeWork},
  };
  return rules;
}

}  // namespace course::stage_one_token
