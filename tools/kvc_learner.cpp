// kvc-learner: `kvc generate` with your decode loop.
//
//   kvc-learner generate (--weights FILE | --synthetic) ... [--impl learner]
//
// The options are kvc generate's (model/generate_command.cpp); `kvc generate --impl
// learner` runs this program with its own arguments. The prompt goes through your
// course::prefill, every new token through your course::decode_step (src/decode.cpp),
// with your ModelCache (src/kvcache.cpp). When your logits have the reference's bits, the
// tokens are the same as `kvc generate --impl reference`'s.
//
// Exit status as kvc's; an exception from your code (a stub's "not implemented yet"
// included) is exit status 1 with its message.
#include <optional>
#include <string>

#include "course/decode.hpp"
#include "course/not_implemented.hpp"
#include "kvc_cli.hpp"

namespace {

// Calls into the learner's code, turning what it throws into a message about it, and
// checks the size of the logits it returns.
std::vector<float> call_learner(const char* what, int vocab,
                                const std::function<std::vector<float>()>& fn) {
  std::vector<float> logits;
  try {
    logits = fn();
  } catch (const course::NotImplemented& e) {
    throw kvc::Failure(std::string("not implemented yet: ") + e.what() +
                       " (your code in src/; build/bin/grader shows the next stage to pass)");
  } catch (const std::exception& e) {
    throw kvc::Failure(std::string("your ") + what + " threw: " + e.what());
  }
  if (static_cast<int>(logits.size()) != vocab) {
    throw kvc::Failure(std::string("your ") + what + " returned " + std::to_string(logits.size()) +
                       " logits; the model's vocabulary has " + std::to_string(vocab));
  }
  return logits;
}

gpt2::Decoder learner_decoder(const gpt2::Model& model, int /*capacity*/) {
  // Made by the first prefill, inside call_learner: constructing it is the learner's code too.
  auto cache = std::make_shared<std::optional<course::ModelCache>>();
  const gpt2::Model* m = &model;
  const int vocab = model.config().vocab;
  gpt2::Decoder d;
  d.prefill = [m, cache, vocab](std::span<const int> prompt) {
    return call_learner("prefill", vocab, [&] {
      cache->emplace();
      return course::prefill(*m, **cache, prompt);
    });
  };
  d.step = [m, cache, vocab](int token) {
    return call_learner("decode_step", vocab, [&] { return course::decode_step(*m, cache->value(), token); });
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kvc-learner: kvc generate with your KV cache and decode loop (src/)"};
  app.require_subcommand(1);
  kvc::GenerateOptions options;
  options.impl = "learner";
  kvc::add_generate_command(app, options, {"learner"});
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return kvc::run_guarded("kvc-learner", [&] { return kvc::run_generate(options, learner_decoder); });
}
