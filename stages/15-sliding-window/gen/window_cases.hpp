// The case builder this stage's named cases (cases.cpp) and seeded ones (random.cpp) share.
#pragma once

#include "gen/cases.hpp"

namespace course::stage_sliding_window {

// A windowed cache of `sink` sinks and a window of `window`, given `past` made-up positions
// (course/speed.hpp's past_value with past_seed), then driven through `ops`
// ({"prefill": [ids]}, {"decode": id}, {"crop": n}, {"save": true}). The generator proves
// that every prefill that was not refused gives the bits of decoding its tokens one at a
// time (the step's logits, total and held positions, and the caches at the end), and that
// while nothing was evicted or cropped after no past, every logits row is Model::forward's.
CaseSpec window_case(std::string name, std::string checks, int sink, int window, int past,
                     uint64_t past_seed, json ops);

// The ops' shorthands.
json prefill_op(std::vector<int> tokens);
json decode_op(int token);
json crop_op(int n);
json save_op();

}  // namespace course::stage_sliding_window
