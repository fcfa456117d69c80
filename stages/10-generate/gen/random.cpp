// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): greedy generation
// after a random prompt, and from a random saved prefix.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_generate {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "generate", i);
    const int n = d.between(1, 6);
    if (i % 2 == 0) {
      const std::vector<int> prompt = d.tokens(d.between(1, 4));
      cases.push_back(generate_case(case_name(seed, i, "generate"),
                                    "Greedy generation of " + plural(n, "token", "tokens") +
                                        " after the random prompt " + list_text(prompt) +
                                        ": the reference's tokens and every step's logits.",
                                    prompt, n));
    } else {
      const std::vector<int> prefix = d.tokens(d.between(1, 4));
      std::vector<std::vector<int>> suffixes;
      for (int s = d.between(1, 2); s > 0; --s) suffixes.push_back(d.tokens(d.between(1, 3)));
      cases.push_back(
          continue_case(case_name(seed, i, "continue"),
                        "The random prefix " + list_text(prefix) + " saved once and continued by " +
                            plural(int(suffixes.size()), "suffix", "suffixes") + " for " +
                            plural(n, "token", "tokens") + " each, on clones.",
                        prefix, suffixes, n));
    }
  }
  return cases;
}

}  // namespace course::stage_generate
