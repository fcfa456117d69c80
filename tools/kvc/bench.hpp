// `kvc bench`: decode and prefill speed of GPT-2 small on synthetic weights, the decode
// speed as a fraction of this machine's memory bandwidth, and the prefill speed as a
// fraction of its arithmetic peak, all measured in one run.
#pragma once

#include <cstdint>
#include <string>

namespace gpt2 {

struct BenchOptions {
  int threads = 1;
  uint64_t seed = 1;
  int context = 128;     // positions already cached before the decode step; prefill length
  int decode_reps = 21;  // timed decode steps (and as many timed streaming reads)
  int prefill_reps = 5;  // timed prefills (and as many timed peak loops)
};

// Times are the best of the repetitions (on a shared machine the best run is the one
// least disturbed); decode_s_median is reported too. Decode steps and streaming reads
// alternate; decode_roofline_ratio is the median over the back-to-back pairs of
// (decode speed / read speed), which other load on the machine disturbs least.
//
// The arithmetic peak: the model may not use fused multiply-add (DETERMINISM.md), so its
// ceiling is the rate of separate vector multiplies and adds. The peak loop runs, on every
// thread of the model's pool, chains of independent multiplies and chains of independent
// adds (as many chains as the vector registers hold, so that neither latency nor memory
// limits them) on the vectors of the matrix product's path (kernels::vector_path(): 16
// floats with AVX-512), and does as many float operations in all as one prefill.
// Prefills and peak loops alternate like decode steps and reads; prefill_peak_ratio is
// the median over the pairs of (prefill GFLOP/s / peak GFLOP/s). A multiply and an add
// count as 2 operations, in the peak as in prefill_gflops.
struct BenchResult {
  int threads = 0;
  int context = 0;
  double synthetic_s = 0;            // time to make the synthetic weights
  double decode_s = 0;               // one decode step, best of decode_reps
  double decode_s_median = 0;        // one decode step, median
  double decode_tok_s = 0;           // 1 / decode_s
  uint64_t decode_weight_bytes = 0;  // weights one decode step reads
  double decode_gb_s = 0;            // decode_weight_bytes / decode_s
  double read_gb_s = 0;              // streaming read of decode_weight_bytes, best
  double decode_roofline_ratio = 0;  // median over pairs of decode speed / read speed
  double prefill_s = 0;              // prefill of `context` tokens, best of prefill_reps
  double prefill_tok_s = 0;
  double prefill_gflops = 0;
  double prefill_gflop = 0;  // floating-point work of one prefill, GFLOP
  std::string vector_path;          // the matrix product's vector path (kernels.hpp)
  double prefill_peak_gflops = 0;   // the peak loop's GFLOP/s, best
  double prefill_peak_ratio = 0;    // median over pairs of prefill GFLOP/s / peak GFLOP/s
  // One-row products over matrices of a decode step's shapes, float panels against the
  // same values as bfloat16 panels (kernels.hpp, Matrix), alternating decode_reps times:
  // the median over the pairs of (float time / bfloat16 time).
  double bf16_product_speedup = 0;
};

// Runs the benchmark; throws gpt2::ModelError for bad options.
BenchResult run_bench(const BenchOptions& options);

// One JSON object on one line.
std::string bench_json(const BenchResult& result);

}  // namespace gpt2
