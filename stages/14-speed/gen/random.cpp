// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): greedy
// generation after a random made-up past and a random prompt. Untimed: speed is the
// committed cases' verdict.
#include "gen/draw.hpp"
#include "speed_cases.hpp"

namespace course::stage_speed {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "speed", i);
    const int past = d.between(0, 300);
    const uint64_t past_seed = uint64_t(d.between(0, 1 << 30));
    const std::vector<int> prompt = d.tokens(d.between(1, 3));
    const int n = d.between(1, 4);
    cases.push_back(speed_case(case_name(seed, i, "speed"),
                               "Greedy generation of " + plural(n, "token", "tokens") + " after a past of " +
                                   std::to_string(past) + " made-up positions and the random prompt " +
                                   list_text(prompt) + ": the reference's tokens, logits and new positions.",
                               past, past_seed, prompt, n, false));
  }
  return cases;
}

}  // namespace course::stage_speed
