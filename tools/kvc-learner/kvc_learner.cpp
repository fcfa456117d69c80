// kvc-learner: `kvc generate` with your decode loop.
//
//   kvc-learner generate (--weights FILE | --synthetic) ... [--impl learner]
//
// The options are kvc generate's (tools/kvc/generate_command.cpp); `kvc generate --impl
// learner` runs this program with its own arguments. Greedy (the default), your
// course::generate_greedy makes the tokens (stage generate, src/decode.cpp); sampling at a
// temperature, kvc's sampler chooses them, the prompt going through your course::prefill
// and every new token through your course::decode_step. Either way with your ModelCache
// (src/kvcache.cpp). When your logits have the reference's bits, the tokens are the same
// as `kvc generate --impl reference`'s.
//
// Exit status as kvc's; an exception from your code (a stub's "not implemented yet"
// included) is exit status 1 with its message.
#include <cstdio>
#include <optional>
#include <string>

#include "course/decode.hpp"
#include "course/not_implemented.hpp"
#include "kvc_cli.hpp"

namespace {

// Calls into the learner's code, turning what it throws into a message about it.
void guard_learner(const char* what, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const course::NotImplemented& e) {
    throw kvc::Failure(std::string("not implemented yet: ") + e.what() +
                       " (your code in src/; build/bin/grader shows the next stage to pass)");
  } catch (const std::exception& e) {
    throw kvc::Failure(std::string("your ") + what + " threw: " + e.what());
  }
}

// The same for a call that returns logits, whose size it checks.
std::vector<float> call_learner(const char* what, int vocab,
                                const std::function<std::vector<float>()>& fn) {
  std::vector<float> logits;
  guard_learner(what, [&] { logits = fn(); });
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

// Your generate_greedy, streaming through on_token; checks that it handed over each token
// it returned, in order. Until it is written (it throws "not implemented yet" before
// choosing any token), your prefill and decode_step run under kvc's greedy sampler.
void learner_greedy(const gpt2::Model& model, std::span<const int> prompt, int max_new_tokens,
                    const std::function<void(int)>& on_token) {
  std::vector<int> streamed;
  course::Generated out;
  try {
    course::ModelCache cache;
    out = course::generate_greedy(model, cache, prompt, max_new_tokens, [&](int token) {
      streamed.push_back(token);
      on_token(token);
    });
  } catch (const course::NotImplemented& e) {
    if (!streamed.empty()) guard_learner("generate_greedy", [&] { throw e; });
    std::fprintf(stderr, "kvc-learner: %s is not written yet; greedy with your prefill and decode_step instead\n",
                 e.what());
    gpt2::Sampler greedy({});
    gpt2::generate(learner_decoder(model, 0), prompt, max_new_tokens, greedy, -1, on_token);
    return;
  } catch (const std::exception& e) {
    throw kvc::Failure(std::string("your generate_greedy threw: ") + e.what());
  }
  if (static_cast<int>(out.tokens.size()) != max_new_tokens)
    throw kvc::Failure("your generate_greedy returned " + std::to_string(out.tokens.size()) + " tokens; " +
                       std::to_string(max_new_tokens) + " were asked for");
  if (streamed != out.tokens)
    throw kvc::Failure("your generate_greedy called on_token with " + std::to_string(streamed.size()) +
                       " tokens that are not the " + std::to_string(out.tokens.size()) +
                       " it returned: it must call it with each token, in order, as it chooses it");
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
  return kvc::run_guarded("kvc-learner", [&] { return kvc::run_generate(options, learner_decoder, learner_greedy); });
}
