// kvc generate (and kvc-learner generate, which shares this code):
//
//   generate (--weights FILE | --synthetic) [--seed N]
//            (--tokenizer DIR --prompt TEXT | [--tokenizer DIR] --tokens IDS)
//            [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]
//            [--impl reference|no-cache|learner] [--threads N]
//
// With a tokenizer it prints the prompt, then each new token's text as soon as it is
// chosen, and stops after <|endoftext|>; without one it prints the new ids as a JSON
// array, all max-new-tokens of them. An empty prompt text starts from <|endoftext|>, as
// GPT-2 was trained. The speeds go to stderr at the end.
#include <chrono>
#include <cstdio>
#include <string>

#include "kvc_cli.hpp"
#include "threads.hpp"
#include "tokenizer.hpp"

namespace kvc {

CLI::App* add_generate_command(CLI::App& app, GenerateOptions& o,
                               const std::vector<std::string>& impls) {
  o.threads = gpt2::default_thread_count();
  auto* g = app.add_subcommand("generate", "generate text (or token ids) with GPT-2");
  auto* weights = g->add_option("--weights", o.weights, "Hugging Face GPT-2 model.safetensors");
  auto* synthetic = g->add_flag("--synthetic", o.synthetic, "seeded synthetic GPT-2 small weights");
  weights->excludes(synthetic);
  g->add_option("--seed", o.seed, "seed of the synthetic weights and of the sampler")
      ->capture_default_str();
  g->add_option("--tokenizer", o.tokenizer, "folder with vocab.json and merges.txt");
  auto* prompt = g->add_option("--prompt", o.prompt, "the prompt text (needs --tokenizer)")
                     ->each([&o](const std::string&) { o.has_prompt = true; });
  auto* tokens = g->add_option("--tokens", o.tokens, "the prompt as token ids, e.g. 464,2068");
  prompt->excludes(tokens);
  g->add_option("--max-new-tokens", o.max_new_tokens, "tokens to generate")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  g->add_option("--temperature", o.temperature, "0 = greedy; above 0 samples")
      ->check(CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  g->add_option("--top-k", o.top_k, "sample among the k most likely tokens (0 = all)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  g->add_option("--top-p", o.top_p, "sample among the most likely tokens holding this mass")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  g->add_option("--impl", o.impl,
                "reference (the model's cached loop), no-cache (Model::forward at every step) "
                "or learner (your src/ through kvc-learner)")
      ->check(CLI::IsMember(impls))
      ->capture_default_str();
  g->add_option("--learner-bin", o.learner_bin,
                "the kvc-learner program for --impl learner (default: next to kvc)");
  g->add_option("--threads", o.threads, "threads (default: all cores)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  return g;
}

namespace {

std::string speed(int n, double seconds) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d tokens in %.3f s (%.1f tok/s)", n, seconds,
                seconds > 0 ? n / seconds : 0.0);
  return buf;
}

// The prompt's ids, checked before any weights are made.
std::vector<int> prompt_ids(const GenerateOptions& o, const gpt2::Tokenizer* tok) {
  if (!o.has_prompt && o.tokens.empty()) throw BadInput("give --prompt TEXT or --tokens IDS");
  if (o.has_prompt && !tok) throw BadInput("--prompt needs --tokenizer DIR (or give --tokens IDS)");
  if (!o.has_prompt) return parse_tokens(o.tokens);
  std::vector<int> ids = tok->encode(o.prompt);
  if (ids.empty()) ids.push_back(tok->eot());
  return ids;
}

gpt2::Model load_model(const GenerateOptions& o, const std::vector<int>& prompt) {
  if (o.synthetic == !o.weights.empty()) throw BadInput("give either --weights FILE or --synthetic");
  const int needed = static_cast<int>(prompt.size()) + o.max_new_tokens;
  auto check = [&](const gpt2::Config& c) {
    gpt2::check_tokens(prompt, c);
    if (needed > c.n_ctx) {
      throw BadInput(std::to_string(prompt.size()) + " prompt tokens + " +
                     std::to_string(o.max_new_tokens) + " new ones exceed the model's context of " +
                     std::to_string(c.n_ctx) + " positions");
    }
  };
  if (o.synthetic) check(gpt2::gpt2_small());  // before making 500 MB of weights
  gpt2::Model m =
      o.synthetic ? gpt2::Model::synthetic(o.seed) : gpt2::Model::load_safetensors(o.weights);
  check(m.config());
  m.set_threads(o.threads);
  return m;
}

// Runs a whole greedy loop, timing it by its tokens: the prefill ends when the first one
// is chosen, the decode steps when the last one is. Prints up to stop_token.
gpt2::GenerationStats run_greedy_loop(const GreedyLoop& loop, const gpt2::Model& model,
                                      std::span<const int> prompt, int max_new_tokens,
                                      int stop_token, const std::function<void(int)>& on_token) {
  using clock = std::chrono::steady_clock;
  gpt2::GenerationStats s;
  s.prompt_tokens = static_cast<int>(prompt.size());
  const clock::time_point t0 = clock::now();
  clock::time_point first = t0, last = t0;
  bool stopped = false;
  loop(model, prompt, max_new_tokens, [&](int token) {
    last = clock::now();
    if (s.new_tokens++ == 0) first = last;
    if (!stopped) on_token(token);
    stopped = stopped || token == stop_token;
  });
  s.decode_steps = s.new_tokens > 0 ? s.new_tokens - 1 : 0;
  s.prefill_s = std::chrono::duration<double>(first - t0).count();
  s.decode_s = std::chrono::duration<double>(last - first).count();
  return s;
}

}  // namespace

int run_generate(const GenerateOptions& o, const DecoderFactory& make_decoder,
                 const GreedyLoop& greedy_loop) {
  std::unique_ptr<gpt2::Tokenizer> tok;
  if (!o.tokenizer.empty()) tok = std::make_unique<gpt2::Tokenizer>(gpt2::Tokenizer::load(o.tokenizer));
  const std::vector<int> prompt = prompt_ids(o, tok.get());
  const gpt2::Model model = load_model(o, prompt);
  if (tok && tok->vocab_size() != model.config().vocab) {
    throw BadInput("the tokenizer has " + std::to_string(tok->vocab_size()) +
                   " tokens but the model " + std::to_string(model.config().vocab));
  }
  const gpt2::Decoder decoder =
      make_decoder(model, static_cast<int>(prompt.size()) + o.max_new_tokens);
  gpt2::Sampler sampler({o.temperature, o.top_k, o.top_p, o.seed});

  int printed = 0;
  std::function<void(int)> on_token;
  if (tok) {
    write_stdout(o.has_prompt ? o.prompt : tok->decode(prompt));
    on_token = [&](int id) {
      if (id != tok->eot()) write_stdout(tok->token_bytes(id));
    };
  } else {
    on_token = [&](int id) { write_stdout((printed++ ? ", " : "[") + std::to_string(id)); };
  }
  const int stop_token = tok ? tok->eot() : -1;
  const gpt2::GenerationStats s =
      greedy_loop && o.temperature == 0.0f
          ? run_greedy_loop(greedy_loop, model, prompt, o.max_new_tokens, stop_token, on_token)
          : gpt2::generate(decoder, prompt, o.max_new_tokens, sampler, stop_token, on_token);
  write_stdout(tok ? "\n" : "]\n");
  std::fprintf(stderr, "%s: prefill %s; decode %s; %d new tokens, %d thread(s)\n", o.impl.c_str(),
               speed(s.prompt_tokens, s.prefill_s).c_str(),
               speed(s.decode_steps, s.decode_s).c_str(), s.new_tokens, o.threads);
  return 0;
}

}  // namespace kvc
