// The case builder this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include "gen/cases.hpp"

namespace course::stage_quantized_kv {

// Tokens decoded one at a time on a q8_0 cache (run_q8_decode). `checks` gains what the
// quantization costs: the largest logit difference against the float cache, and whether
// the top token changed. The generator proves the cache read back is its codes times its
// scales, and that every layer took each token once.
CaseSpec q8_decode_case(std::string name, std::string checks, std::vector<int> tokens);

}  // namespace course::stage_quantized_kv
