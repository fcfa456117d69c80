// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random crop plans
// (some out of range) and speculative rounds.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_rollback {

using namespace draws;

namespace {

CaseSpec random_crop_case(uint64_t seed, int i, Draw& d) {
  CachePlan p = draw_cache_plan(d, true);
  const bool bad_crop = d.chance(30);
  std::string checks = "A random plan of " + p.counts();
  CaseSpec c{"rollback", "", "", "run_cache_plan", json(), nullptr};
  if (bad_crop) {
    const int cache = p.any_cache(d), length = p.lengths[size_t(cache)];
    const int n = d.chance(50) ? -d.between(1, 3) : length + d.between(1, 3);
    p.crop(cache, n);
    c.name = case_name(seed, i, "crop-out-of-range");
    checks += ", then crop(" + std::to_string(n) + ") on a cache of " + std::to_string(length) +
              " positions: that crop throws std::out_of_range.";
    c.expect_error = true;
  } else {
    c.name = case_name(seed, i, "crops");
    checks += ", ending with cache lengths " + list_text(p.lengths) +
              ": every cache keeps exactly its first rows.";
  }
  c.checks = checks;
  c.input = {{"plan", p.plan}};
  return c;
}

CaseSpec random_speculative_case(uint64_t seed, int i, Draw& d) {
  const std::vector<int> prompt = d.tokens(d.between(1, 3));
  json rounds = json::array();
  std::string summary;
  for (int r = d.between(1, 2); r > 0; --r) {
    const std::vector<int> draft = d.tokens(d.between(0, 3));
    const int accepted = d.between(0, int(draft.size()));
    rounds.push_back({{"draft", draft}, {"accepted", accepted}, {"next", d.token()}});
    summary += (summary.empty() ? "" : ", ") + std::to_string(accepted) + " of " +
               std::to_string(draft.size());
  }
  return speculative_case(
      case_name(seed, i, "speculate"),
      "After a random " + std::to_string(prompt.size()) + "-token prompt, rounds accepting " +
          summary +
          " random drafts: the logits and cache of a model that never saw the rejected ones.",
      prompt, rounds);
}

}  // namespace

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "rollback", i);
    cases.push_back(i % 2 == 0 ? random_crop_case(seed, i, d)
                               : random_speculative_case(seed, i, d));
  }
  return cases;
}

}  // namespace course::stage_rollback
