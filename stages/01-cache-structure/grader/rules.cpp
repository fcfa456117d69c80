// What the grader knows of stage cache-structure's adapters beyond their input forms
// (judge/adapter_rules.hpp): their localizers (localize.cpp in this folder).
#include "judge/adapter_rules.hpp"

namespace course::stage_cache_structure {

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_cache_plan", .localize = localize_cache_plan},
      {.name = "read_kvcache", .localize = localize_read_kvcache},
  };
  return rules;
}

}  // namespace course::stage_cache_structure
