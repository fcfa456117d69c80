// kvc as a command: run the built binary, check exit codes, stdout JSON and stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gpt2.hpp"
#include "model_test_helpers.hpp"
#include "safetensors.hpp"
#include "tensors.hpp"

#ifndef KVC_PATH
#error "KVC_PATH must name the kvc binary"
#endif

namespace {

struct KvcRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

KvcRun kvc(const std::string& args) {
  const std::string out = model_test::temp_path("stdout"), err = model_test::temp_path("stderr");
  const std::string cmd =
      std::string("'") + KVC_PATH + "' " + args + " >'" + out + "' 2>'" + err + "' </dev/null";
  const int status = std::system(cmd.c_str());
  KvcRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(kvc_cli, logits_prints_json_with_the_last_positions_logits) {
  const KvcRun r = kvc("logits --synthetic --tokens 464,2068,7586 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("tokens"), nlohmann::json({464, 2068, 7586}));
  const auto& logits = j.at("logits");
  ASSERT_EQ(logits.size(), 50257u);
  for (const auto& v : logits) ASSERT_TRUE(v.is_number_float()) << v.dump();
  // (The exact round trip of the printed numbers is checked on the small model below.)
}

TEST(kvc_cli, all_positions_and_weights_file) {
  // A small safetensors model: fast, and exercises --weights.
  const gpt2::Config c = model_test::small_config();
  const auto tensors = model_test::synthetic_tensors(2, c);
  std::vector<gpt2::safetensors::F32Tensor> out;
  for (const auto& spec : gpt2::tensor_specs(c))
    out.push_back({spec.name, spec.shape, tensors.at(spec.name).data()});
  const std::string path = model_test::temp_path("small.safetensors");
  gpt2::safetensors::write_f32(path, out, {{"n_head", "2"}});

  const KvcRun r = kvc("logits --weights '" + path + "' --tokens 1,2,3,4 --all-positions");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& logits = j.at("logits");
  ASSERT_EQ(logits.size(), 4u);
  const auto truth = gpt2::Model::synthetic(2, c).forward(std::vector<int>{1, 2, 3, 4});
  for (size_t p = 0; p < 4; ++p) {
    ASSERT_EQ(logits[p].size(), 97u);
    for (size_t v = 0; v < 97; ++v) {
      ASSERT_EQ(bits_of(logits[p][v].template get<float>()), bits_of(truth[p * 97 + v]));
    }
  }
  // Bad token for this model's vocab (97).
  const KvcRun bad = kvc("logits --weights '" + path + "' --tokens 1,97");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("token 1 has id 97"), std::string::npos) << bad.err;
  std::filesystem::remove(path);
}

TEST(kvc_cli, digest_is_stable_across_thread_counts) {
  const KvcRun one = kvc("digest --synthetic --seed 1 --tokens 464,2068,7586 --threads 1");
  const KvcRun two = kvc("digest --synthetic --seed 1 --tokens 464,2068,7586 --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(one.out.size(), 17u);  // 16 hex digits and a newline
  EXPECT_EQ(one.out, two.out);
}

// One line per variant; GPT-2 with 12 K/V heads is GPT-2; a cached decode gives the
// forward's digests; the streaming window holding every token is rotary itself.
TEST(kvc_cli, digest_of_the_variants) {
  const std::string args =
      "digest --synthetic --seed 1 --tokens 464,2068,7586 --threads 2 --variant "
      "gpt2,gqa-12,gqa-4,gqa-1,rotary,streaming-1-1,latent,streaming-2-1";
  const KvcRun forward = kvc(args);
  const KvcRun decode = kvc(args + " --decode");
  ASSERT_EQ(forward.exit_code, 0) << forward.err;
  ASSERT_EQ(decode.exit_code, 0) << decode.err;
  EXPECT_EQ(forward.out, decode.out);
  std::map<std::string, std::string> digest;
  std::istringstream lines(forward.out);
  std::string name, hex;
  while (lines >> name >> hex) {
    EXPECT_EQ(hex.size(), 16u) << name;
    digest[name] = hex;
  }
  ASSERT_EQ(digest.size(), 8u) << forward.out;
  const KvcRun plain = kvc("digest --synthetic --seed 1 --tokens 464,2068,7586 --threads 2");
  EXPECT_EQ(digest["gpt2"] + "\n", plain.out);
  EXPECT_EQ(digest["gqa-12"], digest["gpt2"]);
  EXPECT_EQ(digest["streaming-2-1"], digest["rotary"]);  // 3 tokens fit in 2 + 1
  for (const char* other : {"gqa-4", "gqa-1", "rotary", "streaming-1-1", "latent"})
    EXPECT_NE(digest[other], digest["gpt2"]) << other;
  EXPECT_NE(digest["streaming-1-1"], digest["rotary"]);  // the second token is evicted
}

// A short run: six variants, each figure a positive number of CPU seconds.
TEST(kvc_cli, bench_variants_reports_cpu_seconds_per_variant) {
  const KvcRun r = kvc("bench-variants --context 3 --prefill 2 --rounds 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("threads"), 1);
  EXPECT_EQ(j.at("context"), 3);
  EXPECT_EQ(j.at("prefill_rows"), 2);
  std::vector<std::string> names;
  for (const auto& v : j.at("variants")) {
    names.push_back(v.at("name"));
    for (const char* key :
         {"setup_cpu_s", "decode_cpu_s", "prefill_cpu_s", "decode_vs_gpt2", "prefill_vs_gpt2"}) {
      ASSERT_TRUE(v.at(key).is_number()) << key;
      EXPECT_GE(v.at(key).get<double>(), 0.0) << key;
    }
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"gpt2", "gqa-4", "gqa-2", "gqa-1", "rotary", "latent"}));
}

TEST(kvc_cli, bad_inputs_exit_2_with_a_message) {
  struct Case {
    std::string args, needle;
  };
  const std::vector<Case> cases = {
      {"logits --synthetic --tokens 464,-1", "token 1 has id -1"},
      {"logits --synthetic --tokens 50257", "token 0 has id 50257"},
      {"logits --synthetic --tokens 1,x,3", "'x' is not a whole number"},
      {"logits --synthetic --tokens ''", "is not a whole number"},
      {"logits --synthetic --tokens 99999999999", "out of range"},
      {"logits --synthetic", "--tokens"},
      {"logits --tokens 1", "--weights FILE or --synthetic"},
      {"logits --weights /nonexistent/model.safetensors --tokens 1", "cannot open"},
      {"logits --weights x --synthetic --tokens 1", "excludes"},
      {"logits --seed 3 --tokens 1", "requires --synthetic"},
      {"logits --synthetic --tokens 1 --threads 0", "--threads"},
      {"digest --synthetic --tokens 1,2,-5", "token 2 has id -5"},
      {"digest --synthetic --tokens 1 --variant gqa-5",
       "5 K/V heads do not divide the 12 query heads"},
      {"digest --synthetic --tokens 1 --variant mla", "unknown model variant 'mla'"},
      {"digest --synthetic --tokens 1 --variant gpt2,", "unknown model variant ''"},
      {"digest --synthetic --tokens 1 --variant streaming-4", "unknown model variant"},
      {"logits --synthetic --tokens 1 --variant gpt2,rotary", "logits takes one variant"},
      {"bench-variants --rounds 0", "--rounds"},
      {"bench --threads 0", "--threads"},
      {"bench --vector-path avx9", "--vector-path"},
      {"frobnicate", "subcommand"},
      {"", "subcommand"},
  };
  for (const Case& c : cases) {
    const KvcRun r = kvc(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << "\nstdout: " << r.out;
  }
}

// A short bench (4 positions, one decode step) on a forced vector path: the JSON names the
// path and carries every speed and ratio, each positive.
TEST(kvc_cli, bench_reports_speeds_and_ratios_for_the_chosen_path) {
  const KvcRun r = kvc("bench --threads 2 --context 4 --reps 1 --vector-path sse2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("vector_path"), "sse2");
  EXPECT_EQ(j.at("threads"), 2);
  EXPECT_EQ(j.at("context"), 4);
  for (const char* key : {"decode_tok_s", "read_gb_s", "decode_roofline_ratio", "prefill_tok_s",
                          "prefill_gflops", "prefill_peak_gflops", "prefill_peak_ratio",
                          "bf16_product_speedup"}) {
    ASSERT_TRUE(j.at(key).is_number()) << key;
    EXPECT_GT(j.at(key).get<double>(), 0.0) << key;
  }
}

TEST(kvc_cli, too_many_tokens_exit_2) {
  std::string tokens = "1";
  for (int i = 0; i < 1024; ++i) tokens += ",1";
  const KvcRun r = kvc("digest --synthetic --tokens " + tokens);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("1025 tokens, more than n_ctx = 1024"), std::string::npos) << r.err;
}

TEST(kvc_cli, help_exits_0) {
  const KvcRun r = kvc("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("logits"), std::string::npos);
  EXPECT_NE(r.out.find("bench"), std::string::npos);
}

TEST(kvc_cli, a_fifo_given_as_weights_is_an_immediate_error) {
  const std::string fifo = model_test::temp_path("weights.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const KvcRun r = kvc("logits --weights '" + fifo + "' --tokens 1,2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("safetensors file '" + fifo + "': not a regular file (a FIFO)"), std::string::npos) << r.err;
  std::filesystem::remove(fifo);
}

}  // namespace
