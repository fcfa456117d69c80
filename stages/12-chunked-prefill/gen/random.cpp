// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): a few random
// requests served with a random budget.
#include "chunked_cases.hpp"
#include "gen/builders.hpp"
#include "gen/draw.hpp"

namespace course::stage_chunked_prefill {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "chunked-prefill", i);
    const int budget = d.between(1, 8);
    json requests = json::array();
    for (int r = d.between(1, 3); r > 0; --r)
      requests.push_back(serve_request(d.tokens(d.between(1, 9)), d.between(1, 3), d.between(0, 2)));
    cases.push_back(chunked_serve_case(case_name(seed, i, "serve"),
                                       plural(int(requests.size()), "random request", "random requests") +
                                           " served with a budget of " + plural(budget, "row", "rows") +
                                           " a step: each request's numbers as alone.",
                                       8, budget, requests));
  }
  return cases;
}

}  // namespace course::stage_chunked_prefill
