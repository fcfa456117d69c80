// What the grader knows of stage speed's adapter beyond its input form
// (judge/adapter_rules.hpp): the work of a generation after a past that never went
// through the model, and that its cases marked "timed" are timed (judge/speed.hpp).
#include "judge/work.hpp"

namespace course::stage_speed {

namespace {

const WorkRules kSpeedWork = {
    .positions_story =
        [](const Fixture& fx) {
          return count_text(int64_t(fx.input.value("prompt", json::array()).size()),
                            "prompt token") +
                 " + " + fed_back_story(fx) + " (the past of " +
                 std::to_string(fx.input.value("past", int64_t(0))) +
                 " positions is written into the cache, not computed)";
        },
    .learner_held = held_by_fresh_cache,
    .note =
        [](const Fixture& fx, int64_t n) {
          return each_layer_took(n) + ", one per position after the past of " +
                 std::to_string(fx.input.value("past", int64_t(0)));
        },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_speed", .localize = localize_generation, .work = &kSpeedWork, .timed = true},
  };
  return rules;
}

}  // namespace course::stage_speed
