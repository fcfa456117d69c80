// The seeded generator: new cases of every stage from (seed, count), for the hidden set
// (make-fixtures --hidden) and for fresh cases at grading time (grader --random). Each
// stage draws its own (stages/<folder>/gen/random.cpp, read through the stages' table);
// every case goes through the same builders, and the same `finalize` promises, as the
// committed ones (builders.hpp); only the inputs are drawn. This file holds what the
// stages' draws share (draw.hpp).
//
// The draws use their own generator (splitmix64) and their own reduction to a range, never
// <random>'s distributions, whose results the C++ standard leaves to each library: the
// same seed gives the same cases with any compiler. GPT-2 runs are kept to a few tokens
// each (grading time), the plans to a few dozen steps.
#include <stdexcept>

#include "gen/draw.hpp"
#include "gen/stage_cases.hpp"

namespace course {

namespace draws {

// A case's draws depend on (seed, stage, case number) only: case 2 of a seed is the same
// whatever the count.
Draw draw_for(uint64_t seed, const std::string& stage, int index) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the stage's slug
  for (char c : stage) h = (h ^ uint64_t(static_cast<unsigned char>(c))) * 1099511628211ull;
  Draw mix(seed ^ h);
  for (int i = 0; i <= index; ++i) mix.next();
  return Draw(mix.next());
}

std::string case_name(uint64_t seed, int index, const std::string& what) {
  char number[16];
  std::snprintf(number, sizeof number, "%02d", index + 1);
  return "r" + std::to_string(seed) + "-" + number + "-" + what;
}

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string list_text(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Steps of create, append and clone (and crop, with_crops), at least one append.
CachePlan draw_cache_plan(Draw& d, bool with_crops) {
  CachePlan p;
  p.create();
  const int steps = d.between(4, 16);
  for (int s = 0; s < steps || p.appends == 0; ++s) {
    const int roll = d.between(1, 100);
    if (roll <= 8 && p.lengths.size() < 5) {
      p.create();
    } else if (roll <= 22 && p.lengths.size() < 6) {
      p.clone(p.any_cache(d));
    } else if (with_crops && roll <= 40) {
      const int c = p.any_cache(d);
      p.crop(c, d.between(0, p.lengths[size_t(c)]));
    } else {
      const int c = p.any_cache(d);
      for (int t = d.between(1, 3); t > 0; --t) p.append(c);
    }
  }
  return p;
}

int blocks_for(size_t positions) { return int((positions + 15) / 16); }

}  // namespace draws

std::vector<std::string> random_stages() {
  std::vector<std::string> slugs;
  for (const StageCases& stage : stage_cases()) slugs.push_back(stage.slug);
  return slugs;
}

std::vector<CaseSpec> random_cases(const std::string& stage, uint64_t seed, int count) {
  for (const StageCases& s : stage_cases())
    if (s.slug == stage) {
      std::vector<CaseSpec> cases = s.random_cases(seed, count);
      for (const CaseSpec& c : cases)
        if (c.stage != stage)
          throw std::logic_error("stage " + stage + "'s generator drew " + c.name + " of stage \"" +
                                 c.stage + "\"");
      return cases;
    }
  throw std::invalid_argument("no generator of random cases for stage \"" + stage + "\"");
}

}  // namespace course
