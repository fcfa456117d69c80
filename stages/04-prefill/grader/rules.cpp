// What the grader knows of stage prefill's adapters beyond their input forms
// (judge/adapter_rules.hpp): the causal probe's localizer, and the prefill's localizer and
// work (each position through every layer once, whatever the chunks).
#include "judge/work.hpp"

namespace course::stage_prefill {

namespace {

const WorkRules kPrefillWork = {
    .positions_story =
        [](const Fixture& fx) {
          return joined_sizes(sizes_of(fx.input.value("chunks", json()))) + " tokens";
        },
    .learner_held = held_by_fresh_cache,
    .note =
        [](const Fixture& fx, int64_t n) {
          // Each chunk attends to the positions of the chunks before it.
          int64_t before = 0, saved = 0;
          for (int s : sizes_of(fx.input.value("chunks", json()))) {
            saved += before;
            before += s;
          }
          return each_layer_took(n) + ", each position once" +
                 (saved ? "; the later prefills attended to " + std::to_string(saved) +
                              " cached positions instead of recomputing them"
                        : "");
        },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "attend_causal", .localize = localize_probe},
      {.name = "run_prefill", .localize = localize_gpt2_run, .work = &kPrefillWork},
  };
  return rules;
}

}  // namespace course::stage_prefill
