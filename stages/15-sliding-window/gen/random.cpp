// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): a windowed
// cache of random sinks (0 to 4) and window (1 to 8), a random prompt, then four to seven
// random ops: decode steps, short prefills, crops back by up to 8 positions, and a saved
// clone now and then. Every third case starts after a made-up past that ends 4 to 20
// positions short of 1024, so that the last position and a refused op come into reach.
#include <algorithm>

#include "gen/draw.hpp"
#include "window_cases.hpp"

namespace course::stage_sliding_window {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "sliding-window", i);
    const int sink = d.between(0, 4), window = d.between(1, 8);
    const int past = i % 3 == 2 ? 1024 - d.between(4, 20) : 0;
    const uint64_t past_seed = d.next() % 1000000;
    // The total as the reference will have it: a prefill or decode that would pass position
    // 1023 is refused and changes nothing.
    int total = past;
    json ops = json::array();
    auto feed = [&](int n) {
      ops.push_back(n == 1 && d.chance(50) ? decode_op(d.token()) : prefill_op(d.tokens(n)));
      if (total + n <= 1024) total += n;
    };
    feed(d.between(1, 14));
    for (int n = d.between(4, 7); n > 0; --n) {
      const int kind = d.between(0, 9);
      if (kind < 5) {
        feed(1);
      } else if (kind < 7) {
        feed(d.between(2, 5));
      } else if (kind < 9) {
        const int back = d.between(1, std::min(8, std::max(1, total)));
        total = std::max(0, total - back);
        ops.push_back(crop_op(total));
      } else {
        ops.push_back(save_op());
      }
    }
    const std::string checks =
        "A windowed cache of " + plural(sink, "sink", "sinks") + " and a window of " +
        std::to_string(window) +
        (past > 0 ? ", after a made-up past of " + std::to_string(past) + " positions," : "") +
        " through " + std::to_string(ops.size()) +
        " random ops: every op's total, held positions and logits, and the caches at "
        "the end.";
    cases.push_back(
        window_case(case_name(seed, i, "ops"), checks, sink, window, past, past_seed, ops));
  }
  return cases;
}

}  // namespace course::stage_sliding_window
