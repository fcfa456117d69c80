// Pieces shared by kvc's subcommands (tools/kvc/kvc.cpp) and by kvc-learner
// (tools/kvc-learner/kvc_learner.cpp): errors and their exit codes, token lists, stdout,
// and the commands that live in their own files.
//
// Exit status: 0 on success, 2 for bad input (options, token ids, weights or tokenizer
// files: BadInput, gpt2::ModelError, gpt2::TokenizerError), 1 for a failure that is not the
// input's fault (Failure, any other exception). Messages go to stderr, "PROGRAM: message".
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "generate.hpp"

namespace kvc {

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs fn and turns its exceptions into a message on stderr and the exit status above.
int run_guarded(const char* program, const std::function<int()>& fn);

// "464,2068,7586" -> ids; BadInput names the item that is not a whole number. `option`
// names the flag in messages.
std::vector<int> parse_tokens(const std::string& text, const std::string& option = "--tokens");

// Writes s to stdout and flushes.
void write_stdout(const std::string& s);

// The contents of a file; BadInput names it if it cannot be read.
std::string read_text_file(const std::string& path, const std::string& option);

// A subcommand: registered on the app; run() is called when it was parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// kvc tokenize / kvc detokenize (tokenize_command.cpp).
std::vector<Command> add_tokenizer_commands(CLI::App& app);
// kvc chart (chart_command.cpp).
Command add_chart_command(CLI::App& app);

// ---- kvc generate (generate_command.cpp) --------------------------------------------------

struct GenerateOptions {
  std::string weights;
  bool synthetic = false;
  uint64_t seed = 1;  // the synthetic weights' seed and the sampler's
  std::string tokenizer;
  std::string prompt;
  bool has_prompt = false;
  std::string tokens;
  int max_new_tokens = 32;
  float temperature = 0.0f;
  int top_k = 0;
  float top_p = 1.0f;
  std::string impl = "reference";
  std::string learner_bin;
  int threads = 1;
};

// Registers `generate` and its options on app. `impls` are the --impl values accepted.
CLI::App* add_generate_command(CLI::App& app, GenerateOptions& options,
                               const std::vector<std::string>& impls);

// Makes the decoder of the chosen implementation for a loaded model; capacity is the
// number of positions the run needs (prompt + new tokens).
using DecoderFactory = std::function<gpt2::Decoder(const gpt2::Model&, int capacity)>;

// A whole greedy generation in one call, instead of the decoder's prefill and steps
// (kvc-learner: the learner's generate_greedy). It must call on_token with each of the
// max_new_tokens tokens as soon as it is chosen.
using GreedyLoop = std::function<void(const gpt2::Model&, std::span<const int> prompt,
                                      int max_new_tokens, const std::function<void(int)>& on_token)>;

// Loads everything, generates, streams the text (or ids) to stdout and the speeds to
// stderr. With a greedy_loop and temperature 0, that loop generates (it runs to
// max_new_tokens; what follows <|endoftext|> is not printed). Returns the exit status;
// throws as run_guarded expects.
int run_generate(const GenerateOptions& options, const DecoderFactory& make_decoder,
                 const GreedyLoop& greedy_loop = {});

}  // namespace kvc
