// kvc chart --out FILE [--max-position N] [--synthetic [--seed N] | --weights FILE] [--threads N]
//
// Times one generated token at positions 1 .. N with and without the KV cache and writes
// the SVG line chart (chart.hpp); prints a one-line summary. Synthetic weights by default.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "chart.hpp"
#include "kvc_cli.hpp"
#include "threads.hpp"

namespace kvc {

namespace {

struct ChartOptions {
  std::string out;
  int max_position = 512;
  bool synthetic = false;
  std::string weights;
  uint64_t seed = 1;
  int threads = gpt2::default_thread_count();
};

int run_chart(const ChartOptions& o) {
  {  // fail before measuring, and leave no empty file behind
    const bool existed = std::filesystem::exists(o.out);
    std::ofstream probe(o.out, std::ios::binary | std::ios::app);
    if (!probe) throw BadInput("--out: cannot write " + o.out);
    probe.close();
    if (!existed) std::filesystem::remove(o.out);
  }
  gpt2::Model m =
      o.weights.empty() ? gpt2::Model::synthetic(o.seed) : gpt2::Model::load_safetensors(o.weights);
  m.set_threads(o.threads);
  const std::string label = o.weights.empty()
                                ? "GPT-2 small, synthetic weights (seed " + std::to_string(o.seed) + ")"
                                : "GPT-2 from " + o.weights;
  const gpt2::ChartData d = gpt2::measure_chart(m, o.max_position, label);
  const std::string svg = gpt2::chart_svg(d);
  std::ofstream out(o.out, std::ios::binary | std::ios::trunc);
  out << svg;
  out.close();
  if (!out) throw Failure("cannot write " + o.out);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "wrote %s: at position %d one token takes %.1f ms with the cache, %.0f ms without; "
                "tokens 1..%d: %.1f s vs %.1f s (%.1fx); measured in %.1f s\n",
                o.out.c_str(), d.max_position, d.cached.back().ms, d.uncached.back().ms,
                d.max_position, d.cached_total_s, d.uncached_total_s,
                d.uncached_total_s / std::max(d.cached_total_s, 1e-9), d.run_s);
  write_stdout(buf);
  return 0;
}

}  // namespace

Command add_chart_command(CLI::App& app) {
  auto o = std::make_shared<ChartOptions>();
  auto* c = app.add_subcommand("chart", "SVG chart: time per token with and without the KV cache");
  c->add_option("--out", o->out, "the SVG file to write, e.g. why-cache.svg")->required();
  c->add_option("--max-position", o->max_position, "measure positions 1 .. N")
      ->check(CLI::Range(1, 1023))
      ->capture_default_str();
  auto* synthetic = c->add_flag("--synthetic", o->synthetic, "synthetic weights (the default)");
  auto* weights = c->add_option("--weights", o->weights, "Hugging Face GPT-2 model.safetensors");
  weights->excludes(synthetic);
  c->add_option("--seed", o->seed, "seed of the synthetic weights")
      ->capture_default_str()
      ->excludes(weights);
  c->add_option("--threads", o->threads, "threads (default: all cores)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  return {c, [o] { return run_chart(*o); }};
}

}  // namespace kvc
