// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): a random prefix
// continued by random suffixes.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_prefix_reuse {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefix-reuse", i);
    const std::vector<int> prefix = d.tokens(d.between(1, 4));
    std::vector<std::vector<int>> suffixes;
    for (int s = d.between(1, 3); s > 0; --s)
      suffixes.push_back(!suffixes.empty() && d.chance(25) ? suffixes.back()
                                                           : d.tokens(d.between(1, 2)));
    const int reused = int(prefix.size() * suffixes.size());
    cases.push_back(
        reuse_case(case_name(seed, i, "reuse"),
                   "A random " + std::to_string(prefix.size()) + "-token prefix continued by " +
                       plural(int(suffixes.size()), "random suffix", "random suffixes") + ": " +
                       std::to_string(reused) +
                       " positions reused, each continuation equal to a fresh prefill.",
                   prefix, suffixes));
  }
  return cases;
}

}  // namespace course::stage_prefix_reuse
