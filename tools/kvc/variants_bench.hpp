// `kvc bench-variants`: CPU seconds of a decode step and of a prefill on GPT-2 small and on
// its variants (gqa-4, gqa-2, gqa-1, rotary, latent), one thread, measured in one run with
// the variants alternating (variants_bench.cpp says how).
#pragma once

#include <cstdint>
#include <string>

namespace gpt2 {

struct VariantsBenchOptions {
  uint64_t seed = 1;  // the synthetic weights' (and the latent up-projections')
  int context = 128;  // positions cached before the timed decode step
  int prefill = 16;   // rows of the timed prefill
  int rounds = 5;
};

// One JSON object on one line: {"threads": 1, "context": C, "prefill_rows": P, "rounds": R,
// "variants": [{"name", "setup_cpu_s", "decode_cpu_s", "prefill_cpu_s", "decode_vs_gpt2",
// "prefill_vs_gpt2"}, ...]}. Throws gpt2::ModelError for bad options.
std::string variants_bench_json(const VariantsBenchOptions& options);

}  // namespace gpt2
