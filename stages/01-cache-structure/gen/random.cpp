// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random plans of
// create, append and clone on one layer's caches.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_cache_structure {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "cache-structure", i);
    const CachePlan p = draw_cache_plan(d, false);
    cases.push_back({"cache-structure",
                     case_name(seed, i, "plan"),
                     "A random plan of " + p.counts() + ", ending with cache lengths " +
                         list_text(p.lengths) +
                         ": every cache holds exactly the rows appended to it (or to what it was "
                         "cloned from), in order.",
                     "run_cache_plan",
                     {{"plan", p.plan}},
                     nullptr});
  }
  return cases;
}

}  // namespace course::stage_cache_structure
