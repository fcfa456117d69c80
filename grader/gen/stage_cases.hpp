// Each stage's cases, from its own folder: stages/<folder>/gen/cases.cpp (the committed
// cases, in namespace course::stage_<id>) and gen/random.cpp (its part of the seeded
// generator). The table of them is written by CMake from stages/manifest.json
// (kvcourse_stage_table in cmake/Stages.cmake): adding a stage is its folder and its
// manifest entry, and no file here names a stage.
#pragma once

#include <cstdint>
#include <vector>

#include "gen/cases.hpp"

namespace course {

struct StageCases {
  const char* slug;
  std::vector<CaseSpec> (*cases)();                                 // the committed cases
  std::vector<CaseSpec> (*random_cases)(uint64_t seed, int count);  // the seeded generator's
};

// Every stage of the manifest, in course order.
const std::vector<StageCases>& stage_cases();

}  // namespace course
