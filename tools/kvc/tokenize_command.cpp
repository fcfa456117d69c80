// kvc tokenize and kvc detokenize.
//
//   kvc tokenize --tokenizer DIR (--text TEXT | --file FILE)
//       the ids as a JSON array on one line, e.g. [15496, 995]
//   kvc tokenize --tokenizer DIR --bench [--text TEXT | --file FILE] [--reps N]
//       times encode() on the text (default: 1 MiB of generated text, see bench_text) and
//       prints one JSON object: bytes, tokens, best and median seconds, MB/s
//   kvc detokenize --tokenizer DIR --tokens 15496,995
//       the tokens' bytes, exactly (no newline added)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "kvc_cli.hpp"
#include "tokenizer.hpp"

namespace kvc {

namespace {

struct TokenizeOptions {
  std::string dir;
  std::string text;
  std::string file;
  bool has_text = false, has_file = false;  // given on the command line (the text may be "")
  bool bench = false;
  int reps = 5;
  std::string tokens;
};

// 1 MiB of text that looks like prose to the tokenizer without repeating itself much:
// words made of random syllables (so most pieces are new to the merge cache), capitals,
// punctuation, numbers, line breaks, and about one word in 25 in another script (accented
// Latin, Greek, Cyrillic, CJK) or an emoji. Seeded: the same text on every run.
std::string bench_text() {
  static const char* syllables[] = {"ka", "ter", "in", "sto", "mal", "re", "gu", "an",  "pli",
                                    "ve", "dor", "os", "ith", "un", "ce", "bra", "lo", "fen",
                                    "qui", "ar", "es", "mon", "tri", "de", "ply", "sha", "th"};
  static const char* foreign[] = {"café",  "naïve", "Straße", "λόγος", "слово", "東京",
                                  "한국어", "日本語", "🙂",     "über",  "façade", "😀🎉"};
  static const char* punctuation[] = {".", ",", ";", ":", "!", "?", " -", "'s", "'ll", "\""};
  uint64_t state = 12345;
  auto next = [&state](uint64_t n) {  // splitmix64, reduced to [0, n)
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) % n;
  };
  std::string out;
  const size_t target = 1 << 20;
  while (out.size() < target) {
    const uint64_t kind = next(100);
    if (kind < 4) {
      out += foreign[next(std::size(foreign))];
    } else if (kind < 8) {
      out += std::to_string(next(100000));
    } else {
      const uint64_t n = 1 + next(4);
      std::string word;
      for (uint64_t i = 0; i < n; ++i) word += syllables[next(std::size(syllables))];
      if (next(10) == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
      out += word;
    }
    const uint64_t after = next(100);
    if (after < 10) out += punctuation[next(std::size(punctuation))];
    out += after < 2 ? "\n\n" : (after < 4 ? "\n" : " ");
  }
  out.resize(target);
  return gpt2::sanitize_utf8(out);  // the cut may have split a character
}

std::string ids_json(const std::vector<int>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

int run_bench(const gpt2::Tokenizer& tok, const std::string& text, int reps) {
  using clock = std::chrono::steady_clock;
  std::vector<double> times;
  size_t n_tokens = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock::now();
    n_tokens = tok.encode(text).size();
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  const double best = times.front(), median = times[times.size() / 2];
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"bytes\": %zu, \"tokens\": %zu, \"best_s\": %.4g, \"median_s\": %.4g, "
                "\"mb_per_s\": %.4g, \"reps\": %d, \"jit\": %s}\n",
                text.size(), n_tokens, best, median, text.size() / best * 1e-6, reps,
                tok.jit() ? "true" : "false");
  write_stdout(buf);
  return 0;
}

int run_tokenize(const TokenizeOptions& o) {
  if (o.has_text && o.has_file) throw BadInput("give --text or --file, not both");
  if (!o.has_text && !o.has_file && !o.bench) throw BadInput("give --text TEXT or --file FILE");
  const std::string text = o.has_file ? read_text_file(o.file, "--file")
                                      : (o.has_text ? o.text : bench_text());
  const gpt2::Tokenizer tok = gpt2::Tokenizer::load(o.dir);
  if (o.bench) return run_bench(tok, text, o.reps);
  write_stdout(ids_json(tok.encode(text)) + "\n");
  return 0;
}

int run_detokenize(const TokenizeOptions& o) {
  const std::vector<int> ids = parse_tokens(o.tokens);
  const gpt2::Tokenizer tok = gpt2::Tokenizer::load(o.dir);
  write_stdout(tok.decode(ids));
  return 0;
}

}  // namespace

std::vector<Command> add_tokenizer_commands(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  auto* tokenize = app.add_subcommand("tokenize", "GPT-2 token ids of a text, as a JSON array");
  tokenize->add_option("--tokenizer", o->dir, "folder with vocab.json and merges.txt")->required();
  auto* text = tokenize->add_option("--text", o->text, "the text");
  auto* file = tokenize->add_option("--file", o->file, "read the text from this file");
  tokenize->add_flag("--bench", o->bench,
                     "time the tokenizer (default text: 1 MiB of generated prose) and print JSON");
  tokenize->add_option("--reps", o->reps, "timed runs for --bench")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();

  auto* detokenize = app.add_subcommand("detokenize", "the text of GPT-2 token ids");
  detokenize->add_option("--tokenizer", o->dir, "folder with vocab.json and merges.txt")->required();
  detokenize->add_option("--tokens", o->tokens, "token ids, comma-separated, e.g. 15496,995")
      ->required();
  auto run = [o, text, file] {
    o->has_text = text->count() > 0;
    o->has_file = file->count() > 0;
    return run_tokenize(*o);
  };
  return {{tokenize, run},
          {detokenize, [o] { return run_detokenize(*o); }}};
}

}  // namespace kvc
