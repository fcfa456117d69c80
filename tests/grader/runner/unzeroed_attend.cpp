// attend_one and attend_causal that add into `out` instead of writing it, as a weighted
// sum that forgets to zero its output does (probe_buffers_test.cpp): right whenever the
// buffer they are given holds zeros. decode_step and prefill call the reference's.
#include <cstddef>
#include <span>
#include <vector>

#define attend_one reference_attend_one
#define attend_causal reference_attend_causal
#include "../../../reference/decode.cpp"
#undef attend_one
#undef attend_causal

namespace course {

void attend_one(std::span<const float> q, const KVView& cache, std::span<float> out) {
  std::vector<float> sum(out.size());
  reference_attend_one(q, cache, sum);
  for (size_t i = 0; i < out.size(); ++i) out[i] += sum[i];
}

void attend_causal(std::span<const float> q, int n_rows, const KVView& cache,
                   std::span<float> out) {
  std::vector<float> sum(out.size());
  reference_attend_causal(q, n_rows, cache, sum);
  for (size_t i = 0; i < out.size(); ++i) out[i] += sum[i];
}

}  // namespace course
