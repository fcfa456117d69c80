// The model the decode stages run on, built once per process from the weights spec that
// the stage's setup and every fixture of the stage name:
//
//   {"kind": "synthetic", "config": "gpt2-small", "seed": 2026}
//
// (synthetic GPT-2 small weights, model/DETERMINISM.md "Synthetic weights"). A case may add
// "copy_token": {"from": A, "to": B}: the same weights with token B's embedding row a copy
// of token A's (gpt2::Model::with_token_row_copied), so that A and B tie exactly; that
// model is kept beside the stage's.
#pragma once

#include "wire/tensor.hpp"
#include "gpt2.hpp"

namespace course {

// The model for `weights`, built on first use and kept; a different spec replaces it.
// Throws BadInput for a spec this runner cannot build.
const gpt2::Model& model_for(const json& weights);

}  // namespace course
