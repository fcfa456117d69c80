// What the grader knows of stage continuous-batching's adapter beyond its input form
// (judge/adapter_rules.hpp): its localizer, which replays the admission rule step by step.
#include "judge/adapter_rules.hpp"

namespace course::stage_continuous_batching {

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_serve", .localize = localize_serve},
  };
  return rules;
}

}  // namespace course::stage_continuous_batching
