// A stage's hints, opened one tier at a time (the manifest's "hints"): tier 1 the idea or
// the invariant, tier 2 the approach, tier 3 and on near code, for a learner who wants
// the guided path. How many tiers a learner opened is kept with their progress
// (progress.hpp); `grader --hint` and watch mode's `h` open the next one.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace course {

struct Stage;
struct Progress;
struct Diagnosis;

// "the idea", "the approach", "near code" (tier 3 and on).
std::string hint_tier_name(int tier);

// "Hint 2 of 3 for stage 1, cache-structure: the approach"
std::string hint_title(const Stage& stage, int tier);

// The tier's text, a line per line of the manifest's text, a blank line and the lesson.
std::vector<std::string> hint_body(const Stage& stage, int tier);

// Opens the next tier of `stage`'s hints in `progress` and returns its number, from 1;
// once every tier is open, the last one (and progress stays as it was).
int open_next_hint(Progress& progress, const Stage& stage);

// What `grader --hint` prints for tier `tier`: the title, the text, and what is left
// (`again`: every tier was already open, this is the last one shown again).
void print_hint(std::ostream& out, const Stage& stage, int tier, bool again);

// The line offered under an identified mistake whose catalogue entry names tier `tier` of
// its stage's hints, `opened` tiers being open: "hint 2 of 3 (the approach) covers this:
// ..." with how to open it, or "..., already open, covers this" once it is. Empty when
// the entry names no tier (0) or one the stage does not have.
std::string hint_offer(const Stage& stage, int tier, int opened);

// The same for an identified mistake, its stage found from its lesson path
// ("stages/<folder>/lesson.md#..."), with the tiers `progress` has open.
std::string hint_offer(const Diagnosis& mistake, const Progress& progress);

}  // namespace course
