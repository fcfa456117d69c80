// The case builder this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include "gen/cases.hpp"

namespace course::stage_preemption {

// Requests (gen/builders.hpp: serve_request) served over n_blocks blocks, preempting by
// `mode` ("swap" or "recompute") when the pool runs dry. The generator proves that every
// request's numbers equal the request's alone, that the other mode gives the same
// schedule, that every layer took each position once plus, by recompute, the positions
// recomputed, and that the case preempts at least `least_preemptions` times.
CaseSpec preempt_case(std::string name, std::string checks, int n_blocks, const std::string& mode,
                      json requests, int least_preemptions);

}  // namespace course::stage_preemption
