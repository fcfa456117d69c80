// The builder of stage speed's cases, shared by its committed cases and its seeded ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/cases.hpp"

namespace course::stage_speed {

// A greedy generation of n tokens after `prompt`, on a cache that first holds `past`
// made-up positions (course::fill_past with past_seed). `timed`: the grader also times it
// against the model's own loop (judge/speed.hpp).
CaseSpec speed_case(std::string name, std::string checks, int past, uint64_t past_seed,
                    std::vector<int> prompt, int n, bool timed);

}  // namespace course::stage_speed
