// What the grader knows of stage generate's adapters beyond their input forms
// (judge/adapter_rules.hpp): the generation localizer, and the work of a loop that feeds
// each new token back through the cache.
#include "judge/work.hpp"

namespace course::stage_generate {

namespace {

const WorkRules kGenerateWork = {
    .positions_story =
        [](const Fixture& fx) {
          return count_text(int64_t(fx.input.value("prompt", json::array()).size()),
                            "prompt token") +
                 " + " + fed_back_story(fx);
        },
    .learner_held = held_by_fresh_cache,
    .note =
        [](const Fixture& fx, int64_t n) {
          // Without a cache, step i would recompute all prompt + i positions.
          const int64_t prompt = int64_t(fx.input.value("prompt", json::array()).size());
          const int64_t steps = fx.input.value("max_new_tokens", int64_t(1)) - 1;
          const int64_t recompute = prompt * (steps + 1) + steps * (steps + 1) / 2;
          return each_layer_took(n) + ", one per position" +
                 (steps > 0 ? "; recomputing the whole sequence at every step would take " +
                                  std::to_string(recompute) + " rows per layer"
                            : "");
        },
};

const WorkRules kGenerateFromWork = {
    .positions_story =
        [](const Fixture& fx) { return saved_prefix_story(fx) + ", each + " + fed_back_story(fx); },
    .learner_held = held_past_saved_prefix,
    .note = saved_prefix_note,
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_generate", .localize = localize_generation, .work = &kGenerateWork},
      {.name = "run_generate_from", .localize = localize_generation, .work = &kGenerateFromWork},
  };
  return rules;
}

}  // namespace course::stage_generate
