// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp), in three
// kinds that take turns, each with random tokens and lengths:
//   0. two requests that need a new block at the same step while one is free, and a
//      third, admitted last, holding two blocks: it is swapped out whole and back in; a
//      fourth arrives at that step and must wait for the decode rows' blocks;
//   1. case 05's shape: a request preempted at the step another retires, then waiting
//      beside a later, longer request of a higher id that fits only in an empty pool;
//   2. two or three requests of prompts near a block's end, over a pool just large
//      enough for the longest, in either mode.
#include <algorithm>

#include "gen/builders.hpp"
#include "gen/draw.hpp"
#include "preemption_cases.hpp"

namespace course::stage_preemption {

using namespace draws;

namespace {

std::string mode_of(Draw& d) { return d.between(0, 1) == 0 ? "swap" : "recompute"; }

CaseSpec two_block_victim(Draw& d, const std::string& name) {
  // Requests 0 and 1 hold p <= 15 positions after their prefills and cross into a second
  // block at the same step; request 2 holds two blocks, is the one admitted last, and is
  // still running then (as many new tokens, and at most 28 + 5 - 1 = 32 positions: two blocks).
  // Request 3, short, arrives at that step: the decode rows' two new blocks leave it no room.
  const int p = d.between(13, 15);
  json requests =
      json::array({serve_request(d.tokens(p), 18 - p, 0), serve_request(d.tokens(p), 18 - p, 0),
                   serve_request(d.tokens(d.between(17, 28)), 18 - p, 0),
                   serve_request(d.tokens(d.between(2, 8)), d.between(1, 3), 17 - p)});
  return preempt_case(
      name,
      "Four random requests over 5 blocks: the third, holding two blocks, is swapped out and "
      "back in, and the fourth waits for room; each request's numbers as alone.",
      5, "swap", requests, 1);
}

CaseSpec preempted_beside_new(Draw& d, const std::string& name) {
  const std::string mode = mode_of(d);
  const int prompt = d.between(33, 40);
  json requests =
      json::array({serve_request(d.tokens(15), 4, 0), serve_request(d.tokens(14), 4, 0),
                   serve_request(d.tokens(prompt), d.between(1, 49 - prompt), d.between(0, 3))});
  return preempt_case(name,
                      "Case 05's shape with random tokens, by " + mode +
                          ": a preempted request comes back before a new one of a higher id; each "
                          "request's numbers as alone.",
                      3, mode, requests, 1);
}

CaseSpec random_requests(Draw& d, const std::string& name) {
  const std::string mode = mode_of(d);
  json requests = json::array();
  int longest = 0;
  for (int r = d.between(2, 3); r > 0; --r) {
    const int prompt = d.between(12, 16), n_new = d.between(2, 4);
    longest = std::max(longest, (prompt + n_new - 1 + 15) / 16);
    requests.push_back(serve_request(d.tokens(prompt), n_new, d.between(0, 1)));
  }
  const int n_blocks = longest + d.between(0, 2);
  return preempt_case(name,
                      plural(int(requests.size()), "random request", "random requests") + " over " +
                          plural(n_blocks, "block", "blocks") + ", preempting by " + mode +
                          ": each request's numbers as alone.",
                      n_blocks, mode, requests, 0);
}

}  // namespace

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "preemption", i);
    const std::string name = case_name(seed, i, "serve");
    cases.push_back(i % 3 == 0   ? two_block_victim(d, name)
                    : i % 3 == 1 ? preempted_beside_new(d, name)
                                 : random_requests(d, name));
  }
  return cases;
}

}  // namespace course::stage_preemption
