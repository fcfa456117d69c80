// What the grader knows of stage multi-layer-cache's adapters beyond their input forms
// (judge/adapter_rules.hpp): the shape rows' localizer (stage cache-structure's
// localize.cpp, which reads layers' lengths for both stages).
#include "judge/adapter_rules.hpp"

namespace course::stage_multi_layer_cache {

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_model_cache_shapes", .localize = localize_model_cache},
      {.name = "run_model_cache_clone", .localize = localize_model_cache},
  };
  return rules;
}

}  // namespace course::stage_multi_layer_cache
