// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random prompts that
// share whole blocks, through a small pool.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_prefix_cache {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefix-cache", i);
    // Two stems; each prompt is one stem's first 17 to 20 tokens, or a short one of its own,
    // so that whole blocks are shared, and sometimes evicted.
    const std::vector<int> stems[2] = {d.tokens(20), d.tokens(20)};
    std::vector<std::vector<int>> prompts;
    int largest = 1;
    for (int p = d.between(2, 3); p > 0; --p) {
      const std::vector<int>& stem = stems[d.between(0, 1)];
      prompts.push_back(d.chance(75)
                            ? std::vector<int>(stem.begin(), stem.begin() + d.between(17, 20))
                            : d.tokens(d.between(2, 5)));
      largest = std::max(largest, blocks_for(prompts.back().size()));
    }
    const int n_blocks = largest + d.between(0, 2);
    std::vector<int> lengths;
    for (const auto& p : prompts) lengths.push_back(int(p.size()));
    cases.push_back(trace_case(
        case_name(seed, i, "trace"),
        "Random prompts of " + list_text(lengths) +
            " tokens, drawn so that some share their first 16-token block, through a pool of " +
            plural(n_blocks, "block", "blocks") +
            ": cached tokens, evictions and logits as the lesson's rules give them.",
        n_blocks, prompts));
  }
  return cases;
}

}  // namespace course::stage_prefix_cache
