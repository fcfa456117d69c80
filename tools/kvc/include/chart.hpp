// `kvc chart`: why a KV cache pays. Times one generated token at increasing positions
// with the cache (the model's cached loop: one new position through the model, attending
// over the cached ones) and without it (every position of the context through every
// layer again, logits for the last one only), and draws both as an SVG line chart.
#pragma once

#include <string>
#include <vector>

#include "gpt2.hpp"

namespace gpt2 {

struct ChartPoint {
  int position = 0;  // tokens already in the context when the new one is made
  double ms = 0;     // milliseconds for that one token
};

struct ChartData {
  int max_position = 0;
  std::vector<ChartPoint> cached, uncached;  // sampled positions, ascending
  int cached_every = 1;                      // the cached line samples every this many positions
  int cached_reps = 1, uncached_reps = 1;    // timed runs per point (the best is kept)
  double cached_total_s = 0, uncached_total_s = 0;  // making the tokens at every position
                                                    // 1 .. max_position, from the samples
  double run_s = 0;                                 // how long the measurement took
  int threads = 1;
  std::string model;  // e.g. "GPT-2 small, synthetic weights (seed 1)"
};

// Measures positions 1 .. max_position (1 .. n_ctx - 1). The cached line samples about 48
// positions (1, every max_position / 48-th, and the last; best of 3 runs each), the
// uncached one 5 (1 and every quarter of the range; one run each): a recompute at
// position 512 takes seconds, all 512 of them would take many minutes. Totals interpolate
// linearly between the samples.
ChartData measure_chart(const Model& model, int max_position, const std::string& model_label);

// A self-contained SVG document: both lines, axes with ticks and labels, a legend, the
// totals and the speedup, and what was sampled.
std::string chart_svg(const ChartData& data);

}  // namespace gpt2
