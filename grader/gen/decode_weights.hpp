// The weights every fixture of the decode stages (one-token, prefill, prefix-reuse) is
// made with: named in each fixture's input and in the stages' setup request, so a runner
// builds the model once, before the first case (grader/runner/weights.hpp).
#pragma once

#include "wire/tensor.hpp"

namespace course {

inline json decode_weights_spec() {
  return {{"kind", "synthetic"}, {"config", "gpt2-small"}, {"seed", 2026}};
}

}  // namespace course
