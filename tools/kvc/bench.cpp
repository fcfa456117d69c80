// The benchmark behind `kvc bench`.
//
// Decode step: one token at position `context` through every block and the logits, with
// the keys and values of positions 0 .. context-1 already in a cache; the model's cached
// loop (generate.hpp: extend), the same loop a learner writes (embed, qkv, attention over
// the cache, finish_block, logits).
// Roofline: the decode step reads decode_weight_bytes() of weights from memory (they do
// not fit in any cache); the reference is a plain streaming read of the same number of
// bytes of the same weight memory, on the same threads, timed in the same run, decode
// steps and reads alternating. The ratio of the two speeds (per back-to-back pair, median
// over the pairs) says how close the decode step comes to the memory limit.
// Peak: the same idea for the prefill, against a loop of independent vector multiplies and
// adds (bench.hpp), prefills and peak loops alternating.
#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "detail.hpp"
#include "generate.hpp"
#include "gpt2.hpp"
#include "kernels.hpp"
#include "lanes.hpp"
#include "numerics.hpp"
#include "threads.hpp"

namespace gpt2 {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// Prefill of tokens[0 .. n-1] into an emptied cache; the last position's logits.
void prefill(const Model& m, const std::vector<int>& tokens, int n, DecodeCache& cache,
             std::vector<float>& logits) {
  cache.length = 0;
  extend(m, cache, std::span<const int>(tokens.data(), n), logits.data());
}

// One decode step of `token` at position `pos`, positions 0 .. pos-1 cached (the cache
// forgets anything after them first).
void decode_step(const Model& m, int token, int pos, DecodeCache& cache,
                 std::vector<float>& logits) {
  cache.length = pos;
  extend(m, cache, std::span<const int>(&token, 1), logits.data());
}

// Sums n floats from p on all the pool's threads, each a contiguous share.
float streaming_read(ThreadPool& pool, const float* p, size_t n) {
  using numerics::load4;
  using numerics::v4f;
  const int n_tasks = pool.size();
  const size_t per = (n / n_tasks + 15) / 16 * 16;
  std::vector<float> partial(n_tasks * 16, 0.0f);  // one 64-byte slot per task
  pool.run(n_tasks, [&](int t, int) {
    const size_t b = std::min(n, t * per), e = std::min(n, b + per);
    v4f a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    size_t i = b;
    for (; i + 16 <= e; i += 16) {
      a0 = a0 + load4(p + i);
      a1 = a1 + load4(p + i + 4);
      a2 = a2 + load4(p + i + 8);
      a3 = a3 + load4(p + i + 12);
    }
    const v4f s = (a0 + a1) + (a2 + a3);
    float tail = 0.0f;
    for (; i < e; ++i) tail += p[i];
    partial[t * 16] = s[0] + s[1] + s[2] + s[3] + tail;
  });
  float total = 0.0f;
  for (int t = 0; t < n_tasks; ++t) total += partial[t * 16];
  return total;
}

// ---- the arithmetic peak -----------------------------------------------------------------

// N chains of multiplies and N chains of adds on vectors V, `rounds` times: each round is
// 2N vector operations, none waiting for another of the same round. f = 1 and g are passed
// in at run time so that the compiler can neither fold nor skip them; the result depends
// on every chain.
template <class V, int N>
GPT2_LANES_INLINE float mul_add_chains(long rounds, float f_in, float g_in) {
  const V zero = {}, f = zero + f_in, g = zero + g_in;
  V m[N], a[N];
  for (int i = 0; i < N; ++i) {
    m[i] = zero + (1.0f + static_cast<float>(i));
    a[i] = zero + static_cast<float>(i);
  }
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) m[i] = m[i] * f;
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) a[i] = a[i] + g;
  }
  V s = zero;
  for (int i = 0; i < N; ++i) s = s + (m[i] + a[i]);
  float total = 0.0f;
  for (int l = 0; l < lanes::width<V>; ++l) total = total + s[l];
  return total;
}

// One function per vector path, as for the matrix product (kernels.cpp); the chains fill
// the vector registers: 16 of them (7 + 7, and f and g) without AVX-512, 32 with it (12 + 12).
struct PeakLoop {
  int floats_per_round;  // float operations of one round
  float (*run)(long rounds, float f, float g);
};

float peak_sse2(long rounds, float f, float g) {
  return mul_add_chains<lanes::v4f, 7>(rounds, f, g);
}
#if GPT2_X86
__attribute__((target("avx2"))) float peak_avx2(long rounds, float f, float g) {
  return mul_add_chains<lanes::v8f, 7>(rounds, f, g);
}
__attribute__((target("avx512f"))) float peak_avx512(long rounds, float f, float g) {
  return mul_add_chains<lanes::v16f, 12>(rounds, f, g);
}
#endif

PeakLoop peak_loop(kernels::VectorPath path) {
  switch (path) {
#if GPT2_X86
    case kernels::VectorPath::avx512:
      return {2 * 12 * 16, peak_avx512};
    case kernels::VectorPath::avx2:
      return {2 * 7 * 8, peak_avx2};
#endif
    default:
      return {2 * 7 * 4, peak_sse2};
  }
}

// Runs about `flop` float operations of the peak loop, shared by the pool's threads (in 8
// tasks per thread, so that a thread that starts late does not leave another idle at the
// end); returns GFLOP/s.
double peak_gflops(ThreadPool& pool, double flop, volatile float& sink) {
  const PeakLoop loop = peak_loop(kernels::vector_path());
  const int n_tasks = 8 * pool.size();
  const long rounds = std::max(1L, static_cast<long>(flop / n_tasks / loop.floats_per_round));
  std::vector<float> out(n_tasks * 16, 0.0f);  // one 64-byte slot per task
  static volatile float one = 1.0f, step = 0x1p-20f;
  const float f = one, g = step;
  const double t0 = now_s();
  pool.run(n_tasks, [&](int t, int) { out[t * 16] = loop.run(rounds, f, g); });
  const double elapsed = now_s() - t0;
  for (int t = 0; t < n_tasks; ++t) sink = sink + out[t * 16];
  return static_cast<double>(rounds) * loop.floats_per_round * n_tasks / elapsed * 1e-9;
}

// The matrices of one decode step, in GPT-2 small's shapes ([n_in, n_out], panel layout):
// per layer c_attn, attn c_proj, c_fc, mlp c_proj, then the logits' wte. Their values are
// a cheap pattern cut to bfloat16, stored twice: as floats and as bfloat16. One-row
// products over all of them, float and bfloat16 alternating; returns the median over the
// pairs of (float time / bfloat16 time).
double bf16_product_speedup(const Config& c, int reps, ThreadPool& pool) {
  struct Shape {
    int n_in, n_out;
  };
  std::vector<Shape> shapes;
  for (int l = 0; l < c.n_layer; ++l) {
    shapes.push_back({c.d_model, 3 * c.d_model});
    shapes.push_back({c.d_model, c.d_model});
    shapes.push_back({c.d_model, 4 * c.d_model});
    shapes.push_back({4 * c.d_model, c.d_model});
  }
  shapes.push_back({c.d_model, c.vocab});
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<uint16_t>> halves;
  std::vector<kernels::Matrix> fp32, bf16;
  uint32_t state = 12345;
  for (const Shape& sh : shapes) {
    std::vector<float>& f = floats.emplace_back(kernels::panel_floats(sh.n_in, sh.n_out));
    for (float& v : f) {
      state = state * 1664525u + 1013904223u;
      // Magnitudes 2^-7 to just under 2, low 16 bits 0.
      v = numerics::float_from_bits((0x3c000000u + (state >> 9 & 0x03ff0000u)) |
                                    (state & 0x80000000u));
    }
    std::vector<uint16_t>& h = halves.emplace_back(f.size());
    if (!kernels::to_bf16(f.data(), f.size(), h.data()))
      throw ModelError("bench: a bfloat16 pattern value is not a bfloat16");
    fp32.push_back({f.data(), sh.n_in, sh.n_out, true});
    bf16.push_back({nullptr, sh.n_in, sh.n_out, true, h.data()});
  }
  std::vector<float> x(4 * c.d_model, 0.5f), y(c.vocab);
  auto pass = [&](const std::vector<kernels::Matrix>& ms) {
    const double t0 = now_s();
    for (const kernels::Matrix& m : ms)
      kernels::matmul(x.data(), 1, m, nullptr, y.data(), kernels::Epilogue::store, &pool);
    return now_s() - t0;
  };
  pass(fp32);  // warm-up
  pass(bf16);
  std::vector<double> ratios;
  for (int rep = 0; rep < reps; ++rep) {
    const double a = pass(fp32);
    ratios.push_back(a / pass(bf16));
  }
  return median(ratios);
}

}  // namespace

BenchResult run_bench(const BenchOptions& o) {
  if (o.threads < 1) throw ModelError("bench: --threads must be at least 1");
  if (o.context < 1 || o.context >= 1024) throw ModelError("bench: context must be in 1 .. 1023");
  if (o.decode_reps < 1 || o.prefill_reps < 1) throw ModelError("bench: reps must be at least 1");
  BenchResult r;
  r.threads = o.threads;
  r.context = o.context;

  double t0 = now_s();
  Model m = Model::synthetic(o.seed);
  r.synthetic_s = now_s() - t0;
  m.set_threads(o.threads);
  const Config& c = m.config();
  const int n = o.context;

  std::vector<int> tokens(n + 1);
  for (int i = 0; i <= n; ++i) tokens[i] = static_cast<int>((i * 7919LL + 13) % c.vocab);
  DecodeCache cache = make_decode_cache(m, n + 1);
  std::vector<float> logits(c.vocab);

  // Prefill, alternating with the peak loop (as many float operations as one prefill).
  const double d = c.d_model, L = c.n_layer, ctx = n;
  const double flop = L * (24.0 * ctx * d * d + 2.0 * d * ctx * (ctx + 1)) + 2.0 * d * c.vocab;
  ThreadPool& pool = detail::Access::pool(m);
  volatile float sink = 0.0f;
  r.vector_path = kernels::vector_path_name(kernels::vector_path());
  std::vector<double> times, peaks, peak_ratios;
  prefill(m, tokens, n, cache, logits);  // warm-up
  for (int rep = 0; rep < o.prefill_reps; ++rep) {
    t0 = now_s();
    prefill(m, tokens, n, cache, logits);
    times.push_back(now_s() - t0);
    peaks.push_back(peak_gflops(pool, flop, sink));
    peak_ratios.push_back(flop * 1e-9 / times.back() / peaks.back());
  }
  r.prefill_s = best(times);
  r.prefill_gflop = flop * 1e-9;
  r.prefill_tok_s = n / r.prefill_s;
  r.prefill_gflops = r.prefill_gflop / r.prefill_s;
  r.prefill_peak_gflops = *std::max_element(peaks.begin(), peaks.end());
  r.prefill_peak_ratio = median(peak_ratios);

  // Decode, alternating with the streaming read of the same bytes.
  r.decode_weight_bytes = m.decode_weight_bytes();
  // The read streams the first decode_weight_bytes of the arena as floats (the arena holds
  // the matrices as bfloat16, but a read is a read).
  const std::span<const unsigned char> arena = detail::Access::owned_weights(m);
  const size_t n_read = std::min(arena.size(), static_cast<size_t>(r.decode_weight_bytes)) / 4;
  const std::span<const float> weights(reinterpret_cast<const float*>(arena.data()), n_read);
  decode_step(m, tokens[n], n, cache, logits);  // warm-up
  sink = sink + streaming_read(pool, weights.data(), n_read);
  std::vector<double> decode_times, read_times;
  for (int rep = 0; rep < o.decode_reps; ++rep) {
    t0 = now_s();
    decode_step(m, tokens[n], n, cache, logits);
    decode_times.push_back(now_s() - t0);
    t0 = now_s();
    sink = sink + streaming_read(pool, weights.data(), n_read);
    read_times.push_back(now_s() - t0);
  }
  r.decode_s = best(decode_times);
  r.decode_s_median = median(decode_times);
  r.decode_tok_s = 1.0 / r.decode_s;
  r.decode_gb_s = r.decode_weight_bytes / r.decode_s * 1e-9;
  r.read_gb_s = n_read * 4.0 / best(read_times) * 1e-9;
  // Each decode step and the read right after it see nearly the same machine (on a shared
  // machine the bandwidth left to us changes from second to second), so the ratio is
  // taken pair by pair and the median of the pairs reported.
  std::vector<double> ratios;
  for (size_t i = 0; i < decode_times.size(); ++i) {
    const double decode_speed = r.decode_weight_bytes / decode_times[i];
    const double read_speed = n_read * 4.0 / read_times[i];
    ratios.push_back(decode_speed / read_speed);
  }
  r.decode_roofline_ratio = median(ratios);
  r.bf16_product_speedup = bf16_product_speedup(c, o.decode_reps, pool);
  return r;
}

std::string bench_json(const BenchResult& r) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"decode_tok_s\": %.2f, \"read_gb_s\": %.2f, \"decode_roofline_ratio\": %.3f, "
                "\"prefill_tok_s\": %.1f, \"prefill_gflops\": %.2f, "
                "\"prefill_peak_gflops\": %.2f, \"prefill_peak_ratio\": %.3f, "
                "\"vector_path\": \"%s\", \"threads\": %d, "
                "\"context\": %d, \"decode_ms\": %.3f, \"decode_ms_median\": %.3f, "
                "\"decode_gb_s\": %.2f, "
                "\"decode_weight_bytes\": %llu, \"prefill_ms\": %.1f, \"prefill_gflop\": %.3f, "
                "\"synthetic_s\": %.3f, \"bf16_product_speedup\": %.3f}",
                r.decode_tok_s, r.read_gb_s, r.decode_roofline_ratio, r.prefill_tok_s,
                r.prefill_gflops, r.prefill_peak_gflops, r.prefill_peak_ratio,
                r.vector_path.c_str(), r.threads, r.context, r.decode_s * 1e3,
                r.decode_s_median * 1e3, r.decode_gb_s,
                static_cast<unsigned long long>(r.decode_weight_bytes), r.prefill_s * 1e3,
                r.prefill_gflop, r.synthetic_s, r.bf16_product_speedup);
  return buf;
}

}  // namespace gpt2
