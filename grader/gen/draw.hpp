// What the seeded generator's stages share (cases_random.cpp, and each stage's
// stages/<folder>/gen/random.cpp): its own stream of numbers, a case's draw from (seed,
// stage, case number), the case names and the texts of its `checks`, and the cache plans
// the cache stages draw.
//
// The draws use their own generator (splitmix64) and their own reduction to a range, never
// <random>'s distributions, whose results the C++ standard leaves to each library: the
// same seed gives the same cases with any compiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/builders.hpp"
#include "wire/adapter_spec.hpp"

namespace course::draws {

// splitmix64: a seed in, a stream of well-mixed 64-bit numbers out.
class Draw {
 public:
  explicit Draw(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // A whole number from lo to hi, both included (the modulo's bias is far below what matters).
  int between(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }
  bool chance(int percent) { return between(1, 100) <= percent; }
  int token() { return between(0, kInputVocab - 1); }
  std::vector<int> tokens(int n) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) out.push_back(token());
    return out;
  }

 private:
  uint64_t state_;
};

// A case's draws depend on (seed, stage, case number) only: case 2 of a seed is the same
// whatever the count.
Draw draw_for(uint64_t seed, const std::string& stage, int index);

// "r<seed>-<NN>-<what>", NN the case number from 01.
std::string case_name(uint64_t seed, int index, const std::string& what);
// "1 token", "3 tokens".
std::string plural(int n, const std::string& one, const std::string& many);
// "[2, 0, 1]".
std::string list_text(const std::vector<int>& v);

// ---- one layer's caches: plans of create, append (self-describing rows), clone, crop ---

struct CachePlan {
  json plan = json::array();
  std::vector<int> lengths;  // per cache
  int appends = 0, clones = 0, creates = 0, crops = 0;

  void create() {
    plan.push_back({{"op", "create"}});
    lengths.push_back(0);
    ++creates;
  }
  void append(int cache) {
    json op = describing_row(appends++);
    op["op"] = "append";
    op["cache"] = cache;
    plan.push_back(std::move(op));
    ++lengths[size_t(cache)];
  }
  void clone(int cache) {
    plan.push_back({{"op", "clone"}, {"cache", cache}});
    lengths.push_back(lengths[size_t(cache)]);
    ++clones;
  }
  void crop(int cache, int n) {
    plan.push_back({{"op", "crop"}, {"cache", cache}, {"n", n}});
    if (n >= 0 && n <= lengths[size_t(cache)]) lengths[size_t(cache)] = n;
    ++crops;
  }
  int any_cache(Draw& d) const { return d.between(0, int(lengths.size()) - 1); }
  std::string counts() const {
    std::string s = plural(creates, "create", "creates") + ", " +
                    plural(appends, "append", "appends") + ", " + plural(clones, "clone", "clones");
    return crops ? s + ", " + plural(crops, "crop", "crops") : s;
  }
};

// Steps of create, append and clone (and crop, with_crops), at least one append.
CachePlan draw_cache_plan(Draw& d, bool with_crops);

// The 16-position blocks a sequence of `positions` takes.
int blocks_for(size_t positions);

}  // namespace course::draws
