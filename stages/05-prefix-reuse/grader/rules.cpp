// What the grader knows of stage prefix-reuse's adapter beyond its input form
// (judge/adapter_rules.hpp): its localizer, and its work (the prefix once, then only each
// suffix's positions).
#include "judge/work.hpp"

namespace course::stage_prefix_reuse {

namespace {

const WorkRules kReuseWork = {
    .positions_story = saved_prefix_story,
    .learner_held = held_past_saved_prefix,
    .note = saved_prefix_note,
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_prefix_reuse", .localize = localize_gpt2_run, .work = &kReuseWork},
  };
  return rules;
}

}  // namespace course::stage_prefix_reuse
