// grader --random N --seed S: fresh cases for this run, drawn by the course's seeded
// generator and answered by the reference, in make-fixtures (the course authors' program,
// beside the grader in build/bin) run as a child process in its --random mode. Its
// standard output, one fixture per line, is read into the grader's memory, each line with
// the bounded parser and the fixture checks (judge/stage_fixtures.hpp): the cases and their answers
// never touch a file, so a runner (which sees no file of the course, SANDBOX.md) has
// nothing to read them from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "judge/stages.hpp"
#include "wire/fixture.hpp"

namespace course {

// The most bytes make-fixtures may print for one run of --random (every case, answers
// included); more is refused as it is read.
inline constexpr size_t kMaxFreshCasesBytes = size_t(512) << 20;

// A seed from the clock, for a run that gave none: small enough to type back.
uint64_t clock_seed();

// The command line that draws the same cases again: "grader --random 2 --seed 7".
std::string random_replay(int count, uint64_t seed);

// Runs `make_fixtures --random count --seed seed` (with --stage for each of `stages`, or
// once for every stage when `stages` is every stage) and returns its fixtures by stage
// slug. Throws std::runtime_error naming the problem: make-fixtures missing (the message
// says --random needs the course authors' repository or an autograder image that has it),
// failed (its status; its messages went to stderr), printed too much or a line that is not
// a valid fixture of a graded stage.
std::map<std::string, std::vector<Fixture>> draw_fresh_cases(const std::filesystem::path& make_fixtures, int count,
                                                             uint64_t seed, const std::vector<const Stage*>& stages);

}  // namespace course
