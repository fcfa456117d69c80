// The quantized cache (stage quantized-kv) on every vector path of the kernels: the
// reference's decode over a q8_0 cache must give the same logits and the same stored
// blocks, bit for bit, whichever path the CPU runs (SSE2, AVX2, AVX-512), as the model's
// own numbers do (model/DETERMINISM.md). The fixtures hold one machine's answers; this
// shows they do not depend on the path that machine took.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "course/adapters.hpp"
#include "kernels.hpp"
#include "synthetic_file.hpp"

namespace {

using gpt2::kernels::VectorPath;

bool same_blocks(const course::QuantizedModelCache& a, const course::QuantizedModelCache& b) {
  if (a.n_layers() != b.n_layers()) return false;
  for (int l = 0; l < a.n_layers(); ++l) {
    const course::QuantizedKVCache &x = a.layer(l), &y = b.layer(l);
    if (x.length() != y.length()) return false;
    for (int p = 0; p < x.length(); ++p)
      for (int k = 0; k < course::q8_row_blocks; ++k)
        for (bool value : {false, true}) {
          const course::Q8Block& u = value ? x.value_block(p, k) : x.key_block(p, k);
          const course::Q8Block& v = value ? y.value_block(p, k) : y.key_block(p, k);
          if (u.scale != v.scale || u.codes != v.codes) return false;
        }
  }
  return true;
}

TEST(quantized, a_decode_gives_the_same_bits_on_every_vector_path) {
  gpt2::Model model = gpt2::map_synthetic_file(KVCOURSE_WEIGHTS_FILE, 2026);
  model.set_threads(1);
  const std::vector<int> tokens = {464, 2068, 7586};  // "The quick brown"
  const VectorPath saved = gpt2::kernels::vector_path();
  std::vector<float> first_logits;
  course::QuantizedModelCache first_cache;
  int paths = 0;
  for (VectorPath path : {VectorPath::sse2, VectorPath::avx2, VectorPath::avx512}) {
    if (!gpt2::kernels::cpu_has(path)) continue;
    gpt2::kernels::set_vector_path(path);
    course::Q8Run run = course::run_q8_decode(model, tokens);
    ASSERT_EQ(run.logits.size(), tokens.size() * size_t(model.config().vocab));
    if (paths++ == 0) {
      first_logits = run.logits;
      first_cache = run.cache;
      continue;
    }
    EXPECT_EQ(
        std::memcmp(run.logits.data(), first_logits.data(), run.logits.size() * sizeof(float)), 0)
        << "logits on " << gpt2::kernels::vector_path_name(path);
    EXPECT_TRUE(same_blocks(run.cache, first_cache))
        << "blocks on " << gpt2::kernels::vector_path_name(path);
  }
  gpt2::kernels::set_vector_path(saved);
  if (paths < 2) GTEST_SKIP() << "this CPU has one vector path only: nothing to compare";
}

}  // namespace
