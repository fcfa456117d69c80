// What the grader knows of stage paged-cache's adapters beyond their input forms
// (judge/adapter_rules.hpp): their localizers (localize.cpp in this folder), and for a
// failed plan, runs of it cut short to name the step where the learner's state departs.
#include <bit>

#include "judge/adapter_rules.hpp"

namespace course::stage_paged_cache {

namespace {

// One run per halving of a plan of more than one step.
int plan_replay_runs(const Fixture& fx) {
  const json& plan = fx.input.value("plan", json::array());
  return plan.is_array() && plan.size() > 1 ? int(std::bit_width(plan.size())) : 0;
}

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_paged_plan",
       .localize = localize_paged_plan,
       .replay_runs = plan_replay_runs,
       .locate_by_runs = locate_paged_plan_divergence},
      {.name = "run_paged_fork", .localize = localize_paged_fork},
  };
  return rules;
}

}  // namespace course::stage_paged_cache
