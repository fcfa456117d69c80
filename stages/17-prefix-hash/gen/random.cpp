// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): three to six
// prompts made of one to three blocks drawn from four random blocks, each with a random
// tail of 0 to 6 tokens (none: a prompt of whole blocks, whose last block is computed
// again when it is served again), served over keys of 1 to 4 bits, so that keys are shared by other
// pasts all the time.
#include "gen/draw.hpp"
#include "hash_cases.hpp"

namespace course::stage_prefix_hash {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefix-hash", i);
    std::vector<std::vector<int>> blocks;
    for (int b = 0; b < 4; ++b) blocks.push_back(d.tokens(16));
    const int bits = d.between(1, 4);
    std::vector<std::vector<int>> prompts;
    for (int n = d.between(3, 6); n > 0; --n) {
      std::vector<int> prompt;
      for (int k = d.between(1, 3); k > 0; --k) {
        const std::vector<int>& blk = blocks[size_t(d.between(0, 3))];
        prompt.insert(prompt.end(), blk.begin(), blk.end());
      }
      const std::vector<int> tail = d.tokens(d.between(0, 6));
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      prompts.push_back(prompt);
    }
    cases.push_back(hash_case(case_name(seed, i, "prompts"),
                              std::to_string(prompts.size()) +
                                  " random prompts over four shared blocks, with " +
                                  plural(bits, "bit", "bits") +
                                  " of key: every reuse checked, every request's numbers as alone.",
                              64, bits, prompts, 0));
  }
  return cases;
}

}  // namespace course::stage_prefix_hash
