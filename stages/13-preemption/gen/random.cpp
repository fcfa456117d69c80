// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): a few random
// requests with prompts near a block's end, over a pool just large enough for the longest,
// in either mode.
#include <algorithm>

#include "gen/builders.hpp"
#include "gen/draw.hpp"
#include "preemption_cases.hpp"

namespace course::stage_preemption {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "preemption", i);
    const std::string mode = d.between(0, 1) == 0 ? "swap" : "recompute";
    json requests = json::array();
    int longest = 0;
    for (int r = d.between(2, 3); r > 0; --r) {
      const int prompt = d.between(12, 16), n_new = d.between(2, 4);
      longest = std::max(longest, (prompt + n_new - 1 + 15) / 16);
      requests.push_back(serve_request(d.tokens(prompt), n_new, d.between(0, 1)));
    }
    const int n_blocks = longest + d.between(0, 2);
    cases.push_back(preempt_case(case_name(seed, i, "serve"),
                                 plural(int(requests.size()), "random request", "random requests") +
                                     " over " + plural(n_blocks, "block", "blocks") +
                                     ", preempting by " + mode +
                                     ": each request's numbers as alone.",
                                 n_blocks, mode, requests, 0));
  }
  return cases;
}

}  // namespace course::stage_preemption
