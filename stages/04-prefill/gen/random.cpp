// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): causal probes of
// random keys and values, and random prompt chunks prefilled.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_prefill {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefill", i);
    if (i % 2 == 0) {
      const int n = d.between(1, 32), n_rows = d.between(1, n);
      cases.push_back(random_attend_causal_case(
          case_name(seed, i, "attend-causal"),
          "The last " + plural(n_rows, "query row", "query rows") + " of " +
              plural(n, "position", "positions") +
              " of random keys and values: each row attends to the positions up to its own.",
          d.next() >> 16, n, n_rows));
    } else {
      std::vector<std::vector<int>> chunks;
      std::string sizes;
      for (int c = d.between(1, 2); c > 0; --c) {
        chunks.push_back(d.tokens(d.between(1, 3)));
        sizes += (sizes.empty() ? "" : " and ") + std::to_string(chunks.back().size());
      }
      cases.push_back(prefill_case(
          case_name(seed, i, "prefill"),
          "Random prompt chunks of " + sizes +
              " tokens prefilled in turn: logits and cache equal decoding them one at a time.",
          chunks));
    }
  }
  return cases;
}

}  // namespace course::stage_prefill
