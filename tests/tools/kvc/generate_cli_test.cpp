// kvc generate and kvc-learner as commands, on synthetic weights (and a small weights
// file): the reference, no-cache and learner implementations print the same tokens, the
// first one is the argmax of kvc logits, sampling is reproducible, and bad input is exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "model_test_helpers.hpp"
#include "safetensors.hpp"
#include "tensors.hpp"

namespace {

using gen_test::bin;
using gen_test::kvc;
using gen_test::quote;
using gen_test::Output;

const std::string prompt = "--synthetic --seed 1 --tokens 464,2068,7586 --threads 2";

std::vector<int> ids_of(const Output& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).get<std::vector<int>>();
}

std::string learner(const std::string& program) {
  return "--impl learner --learner-bin " + quote(bin(program));
}

TEST(generate_cli, reference_no_cache_and_learner_print_the_same_greedy_tokens) {
  const Output reference = kvc("generate " + prompt + " --max-new-tokens 6");
  const std::vector<int> ids = ids_of(reference);
  ASSERT_EQ(ids.size(), 6u);
  for (int id : ids) EXPECT_TRUE(id >= 0 && id < 50257) << id;
  EXPECT_NE(reference.err.find("reference: prefill 3 tokens"), std::string::npos) << reference.err;
  EXPECT_NE(reference.err.find("decode 5 tokens"), std::string::npos) << reference.err;
  EXPECT_NE(reference.err.find("tok/s"), std::string::npos) << reference.err;

  const Output no_cache = kvc("generate " + prompt + " --max-new-tokens 6 --impl no-cache");
  EXPECT_EQ(ids_of(no_cache), ids);
  EXPECT_NE(no_cache.err.find("no-cache: prefill"), std::string::npos) << no_cache.err;

  // A learner binary built from the reference solution, through kvc and on its own.
  const Output through_kvc = kvc("generate " + prompt + " --max-new-tokens 6 " +
                              learner("kvc-learner-reference"));
  EXPECT_EQ(ids_of(through_kvc), ids);
  // Greedy, the learner's generate_greedy makes the tokens; its timing is read from them.
  EXPECT_NE(through_kvc.err.find("learner: prefill 3 tokens"), std::string::npos) << through_kvc.err;
  EXPECT_NE(through_kvc.err.find("decode 5 tokens"), std::string::npos) << through_kvc.err;
  const Output direct = gen_test::run(bin("kvc-learner-reference"),
                                   "generate " + prompt + " --max-new-tokens 6");
  EXPECT_EQ(ids_of(direct), ids);
}

// Each variant's cached loop (model/variants.hpp) and its no-cache forward print the same
// greedy tokens; they are not GPT-2's.
TEST(generate_cli, variants_cached_and_no_cache_print_the_same_tokens) {
  const std::vector<int> gpt2 = ids_of(kvc("generate " + prompt + " --max-new-tokens 4"));
  for (const char* variant : {"gqa-1", "rotary", "latent"}) {
    const std::string args = "generate " + prompt + " --max-new-tokens 4 --variant " + variant;
    const std::vector<int> cached = ids_of(kvc(args));
    EXPECT_EQ(ids_of(kvc(args + " --impl no-cache")), cached) << variant;
    EXPECT_NE(cached, gpt2) << variant;
  }
  const Output streaming =
      kvc("generate " + prompt + " --max-new-tokens 2 --variant streaming-1-2");
  EXPECT_EQ(streaming.exit_code, 2);
  EXPECT_NE(streaming.err.find("give --impl no-cache"), std::string::npos) << streaming.err;
  EXPECT_EQ(ids_of(kvc("generate " + prompt +
                       " --max-new-tokens 2 --variant streaming-1-2 --impl no-cache"))
                .size(),
            2u);
  const Output learner_variant =
      kvc("generate " + prompt + " --variant rotary " + learner("kvc-learner"));
  EXPECT_EQ(learner_variant.exit_code, 2);
  EXPECT_NE(learner_variant.err.find("kvc-learner has no --variant"), std::string::npos)
      << learner_variant.err;
}

TEST(generate_cli, the_first_token_is_the_argmax_of_kvc_logits) {
  const Output logits = kvc("logits --synthetic --seed 1 --tokens 464,2068,7586 --threads 2");
  ASSERT_EQ(logits.exit_code, 0) << logits.err;
  const auto row = nlohmann::json::parse(logits.out).at("logits").get<std::vector<double>>();
  int best = 0;
  for (int i = 1; i < static_cast<int>(row.size()); ++i)
    if (row[i] > row[best]) best = i;
  EXPECT_EQ(ids_of(kvc("generate " + prompt + " --max-new-tokens 1")), std::vector<int>{best});
}

TEST(generate_cli, sampling_is_reproducible_and_the_same_for_every_implementation) {
  const std::string sampled = prompt + " --max-new-tokens 5 --temperature 0.9 --top-k 50 --top-p 0.95";
  const std::vector<int> a = ids_of(kvc("generate " + sampled));
  EXPECT_EQ(ids_of(kvc("generate " + sampled + " --impl no-cache")), a);
  EXPECT_EQ(ids_of(kvc("generate " + sampled + " " + learner("kvc-learner-reference"))), a);
  // Another seed changes the weights and the draws.
  const std::string other = "--synthetic --seed 2 --tokens 464,2068,7586 --threads 2 "
                            "--max-new-tokens 5 --temperature 0.9 --top-k 50 --top-p 0.95";
  EXPECT_NE(ids_of(kvc("generate " + other)), a);
  // High temperature over all tokens: different from greedy.
  const std::vector<int> hot = ids_of(kvc("generate " + prompt + " --max-new-tokens 5 --temperature 5"));
  EXPECT_NE(hot, ids_of(kvc("generate " + prompt + " --max-new-tokens 5")));
}

TEST(generate_cli, the_skeleton_learner_says_what_is_not_implemented) {
  const Output r = kvc("generate " + prompt + " --max-new-tokens 2 " + learner("kvc-learner"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("kvc-learner: not implemented yet: "), std::string::npos) << r.err;
  // Greedy, kvc-learner tries generate_greedy first, then prefill and decode_step.
  EXPECT_NE(r.err.find("is not written yet; greedy with your prefill and decode_step instead"), std::string::npos)
      << r.err;
}

TEST(generate_cli, a_weights_file_works_and_its_context_is_enforced) {
  const gpt2::Config c = model_test::small_config();
  const auto tensors = model_test::synthetic_tensors(2, c);
  std::vector<gpt2::safetensors::F32Tensor> out;
  for (const auto& spec : gpt2::tensor_specs(c))
    out.push_back({spec.name, spec.shape, tensors.at(spec.name).data()});
  gen_test::TempDir dir;
  const std::string path = (dir / "small.safetensors").string();
  gpt2::safetensors::write_f32(path, out, {{"n_head", "2"}});

  const std::string args = "generate --weights " + quote(path) + " --tokens 1,2,3 ";
  const std::vector<int> ids = ids_of(kvc(args + "--max-new-tokens 29"));  // 3 + 29 = n_ctx
  EXPECT_EQ(ids.size(), 29u);
  for (int id : ids) EXPECT_TRUE(id >= 0 && id < 97) << id;
  EXPECT_EQ(ids_of(kvc(args + "--max-new-tokens 29 --impl no-cache")), ids);
  const Output too_long = kvc(args + "--max-new-tokens 30");
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.err.find("exceed the model's context of 32 positions"), std::string::npos)
      << too_long.err;
  const Output bad_token = kvc("generate --weights " + quote(path) + " --tokens 1,97");
  EXPECT_EQ(bad_token.exit_code, 2);
  EXPECT_NE(bad_token.err.find("97"), std::string::npos) << bad_token.err;
}

TEST(generate_cli, bad_input_is_exit_2_with_a_message) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"generate --synthetic", "give --prompt TEXT or --tokens IDS"},
      {"generate --synthetic --prompt hi", "--prompt needs --tokenizer"},
      {"generate --tokens 1,2", "give either --weights FILE or --synthetic"},
      {"generate --synthetic --weights x --tokens 1", "excludes"},
      {"generate --synthetic --tokens 1,x", "'x' is not a whole number"},
      {"generate --synthetic --tokens 50257", "50257"},
      {"generate --synthetic --tokens 1 --max-new-tokens 1024", "exceed the model's context"},
      {"generate --synthetic --tokens 1 --max-new-tokens 0", "max-new-tokens"},
      {"generate --synthetic --tokens 1 --temperature -1", "temperature"},
      {"generate --synthetic --tokens 1 --top-p 1.5", "top-p"},
      {"generate --synthetic --tokens 1 --impl fast", "impl"},
      {"generate --synthetic --tokens 1 --tokenizer /nonexistent", "/nonexistent/vocab.json"},
      {"generate --weights /nonexistent.safetensors --tokens 1", "/nonexistent.safetensors"},
      {"generate --synthetic --tokens 1 --impl learner --learner-bin /nonexistent/kvc-learner",
       "/nonexistent/kvc-learner, which is not there"},
  };
  for (const auto& [args, message] : cases) {
    const Output r = kvc(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
  const Output only_learner = gen_test::run(bin("kvc-learner-reference"),
                                         "generate --synthetic --tokens 1 --impl reference");
  EXPECT_EQ(only_learner.exit_code, 2) << only_learner.err;
}

}  // namespace
