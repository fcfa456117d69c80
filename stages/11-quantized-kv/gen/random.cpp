// The seeded generator's cases of this stage (gen/draw.hpp, cases_random.cpp): random
// blocks, at random magnitudes, some with values that are exact ties after scaling; and
// every third case a short decode of random tokens on a q8_0 cache.
#include <cmath>

#include "gen/builders.hpp"
#include "gen/draw.hpp"
#include "q8_cases.hpp"

namespace course::stage_quantized_kv {

using namespace draws;

std::vector<CaseSpec> random_cases(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "quantized-kv", i);
    if (i % 3 == 1) {
      const std::vector<int> tokens = d.tokens(d.between(1, 3));
      cases.push_back(q8_decode_case(case_name(seed, i, "decode"),
                                     "The random tokens " + list_text(tokens) +
                                         " decoded on a q8_0 cache: every step's logits and every "
                                         "layer's blocks.",
                                     tokens));
      continue;
    }
    const int n_blocks = d.between(1, 4);
    Tensor t;
    t.shape = {n_blocks, 32};
    t.axes = {"block", "value"};
    std::string sizes;
    for (int b = 0; b < n_blocks; ++b) {
      // A magnitude of 2^-12 .. 2^6; a block with amax 127 (d = 1) now and then, whose
      // half-integer values are ties.
      const bool ties = d.chance(25);
      const float magnitude = std::ldexp(1.0f, d.between(-12, 6));
      for (int v = 0; v < 32; ++v) {
        float x = ties ? float(d.between(-253, 253)) * 0.5f
                       : hashed_float(d.next(), uint64_t(v)) * magnitude;
        if (ties && v == 0) x = d.chance(50) ? 127.0f : -127.0f;
        t.data.push_back(x);
      }
      sizes += (b ? ", " : "") + (ties ? std::string("ties") : "about " + std::to_string(magnitude).substr(0, 8));
    }
    cases.push_back({"quantized-kv", case_name(seed, i, "blocks"),
                     plural(n_blocks, "block", "blocks") + " of random values (" + sizes +
                         "): the reference's scales, codes and values read back.",
                     "run_q8_blocks", {{"values", tensor_to_json(t, TensorEncoding::numbers)}}, nullptr});
  }
  return cases;
}

}  // namespace course::stage_quantized_kv
