// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random requests
// arriving at random steps.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_continuous_batching {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "continuous-batching", i);
    json requests = json::array();
    int largest = 1;
    std::string summary;
    for (int r = d.between(1, 3); r > 0; --r) {
      const int prompt = d.between(1, 4), max_new = d.between(1, 3), arrival = d.between(0, 2);
      requests.push_back(
          {{"prompt", d.tokens(prompt)}, {"max_new_tokens", max_new}, {"arrival", arrival}});
      largest = std::max(largest, blocks_for(size_t(prompt + max_new - 1)));
      summary += (summary.empty() ? "" : "; ") + plural(prompt, "token", "tokens") + ", " +
                 std::to_string(max_new) + " new, arriving at step " + std::to_string(arrival);
    }
    const int n_blocks = largest + d.between(0, 2);
    cases.push_back(serve_case(
        case_name(seed, i, "serve"),
        "Random requests (" + summary + ") on a pool of " + plural(n_blocks, "block", "blocks") +
            ": each request's tokens and logits equal the request run alone.",
        n_blocks, requests));
  }
  return cases;
}

}  // namespace course::stage_continuous_batching
