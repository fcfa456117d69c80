// What the grader knows of stage rollback's speculative adapter beyond its input form
// (judge/adapter_rules.hpp): its localizer, by the round that wrote each position.
#include "judge/adapter_rules.hpp"

namespace course::stage_rollback {

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_speculative", .localize = localize_speculative},
  };
  return rules;
}

}  // namespace course::stage_rollback
