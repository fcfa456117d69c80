// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random appends to
// the twelve layers, and clones.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_multi_layer_cache {

using namespace draws;

namespace {

std::vector<int> draw_layers(Draw& d, int most) {
  std::vector<int> out;
  for (int n = d.between(0, most); n > 0; --n) out.push_back(d.between(0, kInputLayers - 1));
  return out;
}

}  // namespace

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "multi-layer-cache", i);
    if (i % 2 == 0) {
      const std::vector<int> appends = draw_layers(d, 16);
      cases.push_back({"multi-layer-cache",
                       case_name(seed, i, "appends"),
                       "Appends to the layers " + list_text(appends) +
                           ": each layer's length counts the appends made to it.",
                       "run_model_cache_shapes",
                       {{"appends", appends}},
                       nullptr});
    } else {
      const std::vector<int> before = draw_layers(d, 8), after_original = draw_layers(d, 5),
                             after_clone = draw_layers(d, 5);
      cases.push_back(
          {"multi-layer-cache",
           case_name(seed, i, "clone"),
           "Appends " + list_text(before) + ", a clone, then " + list_text(after_original) +
               " to the original and " + list_text(after_clone) +
               " to the clone: each side keeps its own.",
           "run_model_cache_clone",
           {{"before", before}, {"after_original", after_original}, {"after_clone", after_clone}},
           nullptr});
    }
  }
  return cases;
}

}  // namespace course::stage_multi_layer_cache
