// The case builder this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include "gen/cases.hpp"

namespace course::stage_chunked_prefill {

// Requests (gen/builders.hpp: serve_request) served over n_blocks blocks, at most `budget`
// rows a step. The generator proves every request's numbers equal the request's alone,
// every layer took each position once, and no step went over the budget but by decodes.
CaseSpec chunked_serve_case(std::string name, std::string checks, int n_blocks, int budget,
                            json requests);

}  // namespace course::stage_chunked_prefill
