// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): attention probes of
// random keys and values, and random tokens decoded one at a time.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_one_token {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "one-token", i);
    if (i % 2 == 0) {
      const int n = d.between(1, 40);
      cases.push_back(random_attend_one_case(case_name(seed, i, "attend-one"),
                                             "One query over " +
                                                 plural(n, "position", "positions") +
                                                 " of random keys and values: the dot products, "
                                                 "softmax and weighted sum in the specified order.",
                                             d.next() >> 16, n));
    } else {
      const std::vector<int> tokens = d.tokens(d.between(1, 3));
      cases.push_back(decode_case(
          case_name(seed, i, "decode"),
          "The random tokens " + list_text(tokens) +
              " decoded one at a time: every step's logits equal the no-cache forward pass.",
          tokens));
    }
  }
  return cases;
}

}  // namespace course::stage_one_token
