// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random plans on a
// small pool of blocks, and GPT-2 forks.
#include <algorithm>

#include "gen/draw.hpp"

namespace course::stage_paged_cache {

using namespace draws;

namespace {

CaseSpec random_paged_plan(uint64_t seed, int i, Draw& d) {
  const int n_blocks = d.between(2, 6);
  json plan = json::array({{{"op", "create"}}});
  int n_sequences = 1, appends = 0, grows = 0, forks = 0, releases = 0;
  for (int s = d.between(4, 12); s > 0 || appends == 0; --s) {
    const int roll = d.between(1, 100), seq = d.between(0, n_sequences - 1);
    if (roll <= 10) {
      plan.push_back({{"op", "create"}});
      ++n_sequences;
    } else if (roll <= 25) {
      plan.push_back({{"op", "fork"}, {"sequence", seq}});
      ++n_sequences;
      ++forks;
    } else if (roll <= 33) {
      plan.push_back({{"op", "release"}, {"sequence", seq}});
      ++releases;
    } else {
      const int t = d.chance(30) ? d.between(10, 20) : d.between(1, 4);
      if (t > 1 && d.chance(40)) {
        // One append of t positions (one grow(t)): it may need a copy-on-write block and
        // new blocks at once, which t appends of one never do.
        json op = describing_rows(appends, t);
        appends += t;
        op["op"] = "append";
        op["sequence"] = seq;
        op["n"] = t;
        plan.push_back(std::move(op));
        ++grows;
        continue;
      }
      for (int k = 0; k < t; ++k) {
        json op = describing_row(appends++);
        op["op"] = "append";
        op["sequence"] = seq;
        plan.push_back(std::move(op));
      }
    }
  }
  return {"paged-cache",
          case_name(seed, i, "plan"),
          "A random plan on a pool of " + plural(n_blocks, "block", "blocks") + ": " +
              plural(appends, "position", "positions") + " appended" +
              (grows ? " (" + plural(grows, "append", "appends") + " of several at once)" : "") +
              " over " + plural(n_sequences, "sequence", "sequences") + ", " +
              plural(forks, "fork", "forks") + ", " + plural(releases, "release", "releases") +
              "; block tables, counts and rows follow from lowest-free-block allocation and "
              "copy-on-write.",
          "run_paged_plan",
          {{"n_blocks", n_blocks}, {"plan", plan}},
          nullptr};
}

CaseSpec random_fork_case(uint64_t seed, int i, Draw& d) {
  // Prompts of 13 to 17 tokens: branches of 1 to 3 tokens cross into a second block or
  // share a full one.
  const std::vector<int> prompt = d.tokens(d.between(13, 17));
  std::vector<std::vector<int>> branches;
  std::vector<int> sizes;
  for (int b = d.between(1, 2); b > 0; --b) {
    branches.push_back(d.tokens(d.between(1, 3)));
    sizes.push_back(int(branches.back().size()));
  }
  return fork_case(case_name(seed, i, "fork"),
                   "A random " + std::to_string(prompt.size()) +
                       "-token prompt forked into branches of " + list_text(sizes) +
                       " tokens: each equals Model::forward of prompt + branch.",
                   8, prompt, branches);
}

}  // namespace

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "paged-cache", i);
    cases.push_back(i % 3 == 2 ? random_fork_case(seed, i, d) : random_paged_plan(seed, i, d));
  }
  return cases;
}

}  // namespace course::stage_paged_cache
