// kvc: the course's GPT-2 on the command line.
//
//   kvc logits (--weights FILE | --synthetic [--seed N]) --tokens 464,2068,7586
//              [--all-positions] [--threads N] [--vector-path P]
//       {"tokens": [...], "logits": [...]}: the last position's logits (--all-positions:
//       an array with one array per position). Floats are printed in their shortest form
//       that reads back to the same bits.
//   kvc digest (--weights FILE | --synthetic [--seed N]) --tokens ... [--threads N] [--decode]
//              [--vector-path P] [--variant V[,V...]]
//       16 hex digits: FNV-1a 64 of the bits of every position's logits (little-endian
//       float32, position after position). Equal digests mean bit-identical logits.
//       --decode computes them by a cached decode, one token at a time, instead of
//       forward(); the digest must be the same (scripts/determinism-check.sh checks it).
//       With several variants, one line each: "NAME DIGEST".
//   --variant gpt2|gqa-N|rotary|streaming-SINK-WINDOW|latent (logits, digest, generate):
//       the model variants on GPT-2's weights (model/variants.hpp): N K/V heads, rotary
//       positions, rotary positions with a StreamingLLM window (no cached decoder of its
//       own: --decode is its forward), the latent (MLA) cache with up-projections from
//       --seed.
//   kvc bench [--threads N] [--seed N] [--context N] [--reps N] [--vector-path P]
//       one JSON object: decode and prefill speed (bench.hpp).
//   kvc bench-variants [--seed N] [--context N] [--prefill N] [--rounds N]
//       one JSON object: CPU-s of a decode step and of a prefill on one thread, for GPT-2
//       and each variant (variants_bench.hpp).
//   --vector-path sse2|avx2|avx512 makes the kernels (and bench's peak loop) use that path
//   instead of the widest one the CPU has (kernels.hpp); the logits are the same bits.
//   kvc tokenize / detokenize --tokenizer DIR ...   GPT-2's tokenizer (tokenize_command.cpp)
//   kvc generate ...                                text generation (generate_command.cpp)
//   kvc chart --out FILE ...                        why a KV cache pays, as SVG (chart_command.cpp)
//
// Exit status: 0 on success, 2 for bad input (options, tokens, weights or tokenizer files),
// 1 for any other failure (kvc_cli.hpp). Messages go to stderr.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench.hpp"
#include "generate.hpp"
#include "gpt2.hpp"
#include "kernels.hpp"
#include "kvc_cli.hpp"
#include "threads.hpp"
#include "variants.hpp"
#include "variants_bench.hpp"

namespace {

using kvc::BadInput;
using kvc::parse_tokens;
using kvc::write_stdout;

struct ModelOptions {
  std::string weights;
  bool synthetic = false;
  uint64_t seed = 1;
  std::string tokens;
  int threads = gpt2::default_thread_count();
  bool all_positions = false;
  bool decode = false;
  std::string vector_path;  // empty: the widest the CPU has
  std::string variant = "gpt2";  // one, or (digest) several separated by commas
};

void add_variant_option(CLI::App* sub, std::string& variant, const char* what) {
  sub->add_option(
         "--variant", variant,
         std::string("gpt2, gqa-N (N K/V heads), rotary, streaming-SINK-WINDOW or latent") + what)
      ->capture_default_str();
}

// The variants named by a comma-separated list, checked before any weights are made.
std::vector<gpt2::Variant> parse_variants(const std::string& list, uint64_t seed) {
  std::vector<gpt2::Variant> out;
  size_t at = 0;
  while (true) {
    const size_t comma = list.find(',', at);
    const std::string name =
        list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    try {
      out.push_back(gpt2::Variant::parse(name, seed));
    } catch (const gpt2::ModelError& e) {
      throw BadInput(std::string("--variant: ") + e.what());
    }
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// --vector-path for every subcommand (the results are the same bits whatever the path;
// scripts/determinism-check.sh checks that, `kvc bench` compares speeds).
void add_vector_path_option(CLI::App* sub, std::string& path) {
  sub->add_option("--vector-path", path,
                  "sse2, avx2 or avx512: the kernels' vector instructions (default: the "
                  "widest this CPU has)")
      ->check(CLI::IsMember({"sse2", "avx2", "avx512"}));
}

void add_model_options(CLI::App* sub, ModelOptions& o) {
  auto* weights = sub->add_option("--weights", o.weights, "Hugging Face GPT-2 model.safetensors");
  auto* synthetic =
      sub->add_flag("--synthetic", o.synthetic, "seeded synthetic GPT-2 small weights");
  weights->excludes(synthetic);
  sub->add_option("--seed", o.seed, "seed of the synthetic weights")
      ->capture_default_str()
      ->needs(synthetic);
  sub->add_option("--tokens", o.tokens, "token ids, comma-separated, e.g. 464,2068,7586")
      ->required();
  sub->add_option("--threads", o.threads, "threads (default: all cores)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_vector_path_option(sub, o.vector_path);
}

// Loads the weights; for synthetic ones the tokens are checked first (the config is
// known), so a bad token fails fast instead of after making 250 MB of weights.
gpt2::Model load_model(const ModelOptions& o, const std::vector<int>& tokens) {
  if (o.synthetic && !o.weights.empty()) {
    throw BadInput("give either --weights FILE or --synthetic, not both");
  }
  if (!o.synthetic && o.weights.empty()) throw BadInput("give --weights FILE or --synthetic");
  if (o.synthetic) gpt2::check_tokens(tokens, gpt2::gpt2_small());
  gpt2::Model m =
      o.synthetic ? gpt2::Model::synthetic(o.seed) : gpt2::Model::load_safetensors(o.weights);
  m.set_threads(o.threads);
  return m;
}

void append_float(std::string& out, float f) {
  if (!std::isfinite(f)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, f);
  (void)ec;
  out.append(buf, ptr);
}

void append_row(std::string& out, const float* row, int n) {
  out += '[';
  for (int i = 0; i < n; ++i) {
    if (i) out += ", ";
    append_float(out, row[i]);
  }
  out += ']';
}

int run_logits(const ModelOptions& o) {
  const std::vector<int> tokens = parse_tokens(o.tokens);
  const std::vector<gpt2::Variant> variants = parse_variants(o.variant, o.seed);
  if (variants.size() != 1) throw BadInput("--variant: logits takes one variant");
  const gpt2::Model m = load_model(o, tokens);
  const std::vector<float> logits = gpt2::variant_forward(m, variants[0])(tokens);
  const int vocab = m.config().vocab;
  const int n = static_cast<int>(tokens.size());
  std::string out = "{\"tokens\": [";
  for (int i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += std::to_string(tokens[i]);
  }
  out += "], \"logits\": ";
  if (o.all_positions) {
    out += '[';
    for (int i = 0; i < n; ++i) {
      if (i) out += ", ";
      append_row(out, logits.data() + static_cast<size_t>(i) * vocab, vocab);
    }
    out += ']';
  } else {
    append_row(out, logits.data() + static_cast<size_t>(n - 1) * vocab, vocab);
  }
  out += "}\n";
  write_stdout(out);
  return 0;
}

// Logits of every position by a variant's cached decode (variants.hpp), one token at a
// time; the streaming variant's forward is such a decode already.
std::vector<float> decode_all(const gpt2::Model& m, const gpt2::Variant& variant,
                              const std::vector<int>& tokens) {
  if (variant.kind == gpt2::Variant::Kind::streaming)
    return gpt2::variant_forward(m, variant)(tokens);
  gpt2::check_tokens(tokens, m.config());
  const size_t vocab = m.config().vocab;
  std::vector<float> logits(tokens.size() * vocab);  // [n, vocab]
  if (tokens.empty()) return logits;
  gpt2::Decoder decoder = gpt2::variant_decoder(m, variant, static_cast<int>(tokens.size()));
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    const std::vector<float> row = pos == 0
                                       ? decoder.prefill(std::span<const int>(tokens.data(), 1))
                                       : decoder.step(tokens[pos]);
    std::copy(row.begin(), row.end(), logits.begin() + pos * vocab);
  }
  return logits;
}

// Logits of every position by a cached decode, one token at a time (the loop a learner
// writes in the decode stage); by the determinism contract equal to forward()'s.
std::vector<float> decode_all(const gpt2::Model& m, const std::vector<int>& tokens) {
  gpt2::check_tokens(tokens, m.config());
  const size_t n = tokens.size(), vocab = m.config().vocab;
  std::vector<float> logits(n * vocab);  // [n, vocab]
  if (n == 0) return logits;
  gpt2::DecodeCache cache = gpt2::make_decode_cache(m, static_cast<int>(n));
  for (size_t pos = 0; pos < n; ++pos)
    gpt2::extend(m, cache, std::span<const int>(&tokens[pos], 1), logits.data() + pos * vocab);
  return logits;
}

// kvc generate --impl learner: the learner's code is linked into kvc-learner, which takes
// the same arguments; this process becomes it (its output is the learner's, streamed).
int exec_learner(const kvc::GenerateOptions& o, int argc, char** argv) {
  std::string path = o.learner_bin;
  if (path.empty()) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    path = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "kvc-learner";
  }
  if (access(path.c_str(), X_OK) != 0) {
    throw BadInput("--impl learner runs " + path + ", which is not there: build it with " +
                   "cmake --build build --target kvc-learner");
  }
  std::vector<char*> args(argv, argv + argc);
  args[0] = path.data();
  args.push_back(nullptr);
  execv(path.c_str(), args.data());
  throw kvc::Failure("cannot run " + path + ": " + std::strerror(errno));
}

gpt2::Decoder make_decoder(const std::string& impl, const gpt2::Variant& variant,
                           const gpt2::Model& m, int capacity) {
  if (variant.kind != gpt2::Variant::Kind::gpt2) {
    if (impl == "no-cache") return gpt2::variant_no_cache_decoder(m, variant);
    if (variant.kind == gpt2::Variant::Kind::streaming)
      throw BadInput("--variant " + variant.name() +
                     ": give --impl no-cache (it has no cached decoder)");
    return gpt2::variant_decoder(m, variant, capacity);
  }
  if (impl == "no-cache") return gpt2::no_cache_decoder(m);
  return gpt2::cached_decoder(m, capacity);
}

// FNV-1a 64 of the logits' bits, as 16 hex digits.
std::string logits_digest(const std::vector<float>& logits) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (float f : logits) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int b = 0; b < 4; ++b) {
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ull;  // FNV-1a 64 prime
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int run_digest(const ModelOptions& o) {
  const std::vector<int> tokens = parse_tokens(o.tokens);
  const std::vector<gpt2::Variant> variants = parse_variants(o.variant, o.seed);
  const gpt2::Model m = load_model(o, tokens);
  std::string out;
  for (const gpt2::Variant& v : variants) {
    const bool plain = v.kind == gpt2::Variant::Kind::gpt2;
    const std::vector<float> logits = !o.decode ? gpt2::variant_forward(m, v)(tokens)
                                      : plain   ? decode_all(m, tokens)
                                                : decode_all(m, v, tokens);
    if (variants.size() > 1) out += v.name() + " ";
    out += logits_digest(logits) + "\n";
  }
  write_stdout(out);
  return 0;
}

// Makes the kernels use the named vector path (none named: keep the widest); a path this
// CPU lacks is a gpt2::ModelError.
void use_vector_path(const std::string& name) {
  using gpt2::kernels::VectorPath;
  if (name.empty()) return;
  for (VectorPath p : {VectorPath::sse2, VectorPath::avx2, VectorPath::avx512}) {
    if (name == gpt2::kernels::vector_path_name(p)) return gpt2::kernels::set_vector_path(p);
  }
  throw BadInput("--vector-path: unknown path '" + name + "' (sse2, avx2 or avx512)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kvc: the course's bit-exact GPT-2 (logits, digests, speed, text, the cache chart)"};
  app.require_subcommand(1);

  ModelOptions logits_opts, digest_opts;
  auto* logits = app.add_subcommand("logits", "print the logits of a token sequence as JSON");
  add_model_options(logits, logits_opts);
  logits->add_flag("--all-positions", logits_opts.all_positions,
                   "print the logits of every position, not just the last");
  auto* digest = app.add_subcommand("digest", "print a hex digest of every position's logits");
  add_model_options(digest, digest_opts);
  digest->add_flag("--decode", digest_opts.decode,
                   "compute the logits by a cached decode, one token at a time, not forward()");
  add_variant_option(logits, logits_opts.variant, "");
  add_variant_option(digest, digest_opts.variant,
                     "; several, comma-separated, print one line each");

  gpt2::BenchOptions bench_opts;
  bench_opts.threads = gpt2::default_thread_count();
  auto* bench = app.add_subcommand("bench", "decode and prefill speed of GPT-2 small, as JSON");
  bench->add_option("--threads", bench_opts.threads, "threads (default: all cores)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  bench->add_option("--seed", bench_opts.seed, "seed of the synthetic weights")
      ->capture_default_str();
  bench->add_option("--context", bench_opts.context, "cached positions before the decode step")
      ->check(CLI::Range(1, 1023))
      ->capture_default_str();
  bench->add_option("--reps", bench_opts.decode_reps, "timed decode steps")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  std::string bench_vector_path;
  add_vector_path_option(bench, bench_vector_path);

  gpt2::VariantsBenchOptions vbench_opts;
  auto* vbench = app.add_subcommand(
      "bench-variants",
      "CPU-s of a decode step and a prefill, GPT-2 small and its variants, as JSON");
  vbench->add_option("--seed", vbench_opts.seed, "seed of the synthetic weights")
      ->capture_default_str();
  vbench->add_option("--context", vbench_opts.context, "cached positions before the decode step")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  vbench->add_option("--prefill", vbench_opts.prefill, "rows of the prefill")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  vbench->add_option("--rounds", vbench_opts.rounds, "rounds, the variants alternating")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();

  kvc::GenerateOptions generate_opts;
  auto* generate =
      kvc::add_generate_command(app, generate_opts, {"reference", "no-cache", "learner"});
  std::string generate_variant = "gpt2";
  add_variant_option(generate, generate_variant, " (reference: the variant's cached loop)");
  std::vector<kvc::Command> commands = kvc::add_tokenizer_commands(app);
  commands.push_back(kvc::add_chart_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  return kvc::run_guarded("kvc", [&] {
    if (logits->parsed()) {
      use_vector_path(logits_opts.vector_path);
      return run_logits(logits_opts);
    }
    if (digest->parsed()) {
      use_vector_path(digest_opts.vector_path);
      return run_digest(digest_opts);
    }
    if (bench->parsed()) {
      use_vector_path(bench_vector_path);
      write_stdout(gpt2::bench_json(gpt2::run_bench(bench_opts)) + "\n");
      return 0;
    }
    if (vbench->parsed()) {
      write_stdout(gpt2::variants_bench_json(vbench_opts) + "\n");
      return 0;
    }
    if (generate->parsed()) {
      const std::vector<gpt2::Variant> variant =
          parse_variants(generate_variant, generate_opts.seed);
      if (variant.size() != 1) throw BadInput("--variant: generate takes one variant");
      if (generate_opts.impl == "learner") {
        if (variant[0].kind != gpt2::Variant::Kind::gpt2)
          throw BadInput("--impl learner runs GPT-2 itself (kvc-learner has no --variant)");
        return exec_learner(generate_opts, argc, argv);
      }
      return kvc::run_generate(generate_opts, [&](const gpt2::Model& m, int capacity) {
        return make_decoder(generate_opts.impl, variant[0], m, capacity);
      });
    }
    for (const kvc::Command& c : commands)
      if (c.app->parsed()) return c.run();
    return 1;
  });
}
