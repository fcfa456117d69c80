// `kvc bench-variants`: what a decode step and a prefill cost on GPT-2 small and on each
// of its variants (model/variants.hpp), in CPU seconds of one thread, as a course's
// grading pays them (a runner's model computes on one thread). Rounds alternate the
// variants, so that a change of the machine's load falls on all of them; each figure is
// the median over the rounds, and each ratio to GPT-2 the median of the per-round ratios.
//
//   decode:  one token at position `context`, `context` positions cached (one step, after
//            an untimed prefill of `context` tokens)
//   prefill: `prefill` tokens from an empty cache
//   setup:   making the variant's decoder (the latent variant generates its up-projections)
#include "variants_bench.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gpt2.hpp"
#include "variants.hpp"

namespace gpt2 {

namespace {

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string variants_bench_json(const VariantsBenchOptions& o) {
  if (o.context < 1 || o.context > 1000 || o.prefill < 1 || o.prefill > 1000 || o.rounds < 1)
    throw ModelError("bench-variants: context and prefill must be 1 .. 1000, rounds at least 1");
  std::vector<Variant> variants;
  for (const char* name : {"gpt2", "gqa-4", "gqa-2", "gqa-1", "rotary", "latent"})
    variants.push_back(Variant::parse(name, o.seed));
  Model m = Model::synthetic(o.seed);
  m.set_threads(1);
  std::vector<int> tokens(static_cast<size_t>(std::max(o.context, o.prefill) + 1));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7919 + 13) % 50257);
  const size_t n = variants.size();
  std::vector<std::vector<double>> setup(n), decode(n), prefill(n);
  for (int round = 0; round < o.rounds; ++round) {
    for (size_t v = 0; v < n; ++v) {
      double t = cpu_s();
      Decoder fresh = variant_decoder(m, variants[v], o.prefill);
      setup[v].push_back(cpu_s() - t);
      t = cpu_s();
      fresh.prefill(std::span<const int>(tokens.data(), static_cast<size_t>(o.prefill)));
      prefill[v].push_back(cpu_s() - t);
      Decoder past = variant_decoder(m, variants[v], o.context + 1);
      past.prefill(std::span<const int>(tokens.data(), static_cast<size_t>(o.context)));
      t = cpu_s();
      past.step(tokens[static_cast<size_t>(o.context)]);
      decode[v].push_back(cpu_s() - t);
    }
  }
  std::string out = "{\"threads\": 1, \"context\": " + std::to_string(o.context) +
                    ", \"prefill_rows\": " + std::to_string(o.prefill) +
                    ", \"rounds\": " + std::to_string(o.rounds) + ", \"variants\": [";
  for (size_t v = 0; v < n; ++v) {
    std::vector<double> decode_ratio, prefill_ratio;
    for (int r = 0; r < o.rounds; ++r) {
      decode_ratio.push_back(decode[v][r] / decode[0][r]);
      prefill_ratio.push_back(prefill[v][r] / prefill[0][r]);
    }
    if (v) out += ", ";
    out += "{\"name\": \"" + variants[v].name() +
           "\", \"setup_cpu_s\": " + number(median(setup[v])) +
           ", \"decode_cpu_s\": " + number(median(decode[v])) +
           ", \"prefill_cpu_s\": " + number(median(prefill[v])) +
           ", \"decode_vs_gpt2\": " + number(median(decode_ratio)) +
           ", \"prefill_vs_gpt2\": " + number(median(prefill_ratio)) + "}";
  }
  return out + "]}";
}

}  // namespace gpt2
