// kvc tokenize, kvc detokenize and kvc generate with a tokenizer, as commands, on the real
// GPT-2 vocabulary (the fetch_gpt3_encoder fixture).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"

namespace {

using gen_test::kvc;
using gen_test::quote;
using gen_test::Output;

std::string tokenizer() { return "--tokenizer " + quote(gen_test::vocab_dir().string()); }

TEST(tokenize_cli, prints_the_ids_as_a_json_array) {
  const Output r = kvc("tokenize " + tokenizer() + " --text 'Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[15496, 995]\n");
  EXPECT_EQ(kvc("tokenize " + tokenizer() + " --text ' Hello world'").out, "[18435, 995]\n");
  EXPECT_EQ(kvc("tokenize " + tokenizer() + " --text indivisible").out, "[521, 452, 12843]\n");
  EXPECT_EQ(kvc("tokenize " + tokenizer() + " --text ''").out, "[]\n");

  gen_test::TempDir dir;
  gen_test::write_file(dir / "in.txt", "Hello world");
  EXPECT_EQ(kvc("tokenize " + tokenizer() + " --file " + quote((dir / "in.txt").string())).out,
            "[15496, 995]\n");
}

TEST(tokenize_cli, detokenize_prints_exactly_the_bytes) {
  Output r = kvc("detokenize " + tokenizer() + " --tokens 15496,995");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Hello world");
  r = kvc("detokenize " + tokenizer() + " --tokens 50256");
  EXPECT_EQ(r.out, "<|endoftext|>");
  // Half a character: one token of the two that spell "é" (no byte is added or changed).
  const Output e = kvc("tokenize " + tokenizer() + " --text '\xc3\xa9t\xc3\xa9'");
  const auto ids = nlohmann::json::parse(e.out).get<std::vector<int>>();
  std::string joined;
  for (int id : ids) joined += kvc("detokenize " + tokenizer() + " --tokens " + std::to_string(id)).out;
  EXPECT_EQ(joined, "\xc3\xa9t\xc3\xa9");
}

TEST(tokenize_cli, bench_prints_json) {
  const Output r = kvc("tokenize " + tokenizer() + " --bench --reps 1 --text 'Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("bytes"), 11);
  EXPECT_EQ(j.at("tokens"), 2);
  EXPECT_GT(j.at("mb_per_s").get<double>(), 0.0);
}

TEST(tokenize_cli, missing_or_malformed_files_are_exit_2_naming_them) {
  gen_test::TempDir dir;
  Output r = kvc("tokenize --tokenizer " + quote(dir.path().string()) + " --text x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir / "vocab.json").string() + ": cannot open"), std::string::npos) << r.err;

  std::filesystem::copy_file(gen_test::vocab_dir() / "vocab.json", dir / "vocab.json");
  gen_test::write_file(dir / "merges.txt", "#version: 0.2\n\xc4\xa0 t\nnot-a-merge\n");
  r = kvc("detokenize --tokenizer " + quote(dir.path().string()) + " --tokens 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir / "merges.txt").string() + ":3: expected two tokens"), std::string::npos)
      << r.err;

  gen_test::write_file(dir / "vocab.json", "{\"a\": ");
  r = kvc("tokenize --tokenizer " + quote(dir.path().string()) + " --text x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir / "vocab.json").string() + ": not valid JSON"), std::string::npos) << r.err;
}

TEST(tokenize_cli, bad_arguments_are_exit_2) {
  for (const std::string& args :
       {"tokenize " + tokenizer(), std::string("tokenize --text x"), "tokenize " + tokenizer() + " --text a --file b",
        "tokenize " + tokenizer() + " --file /nonexistent.txt",
        "detokenize " + tokenizer() + " --tokens 1,,2", "detokenize " + tokenizer() + " --tokens 50257",
        "detokenize " + tokenizer() + " --tokens -1", "detokenize " + tokenizer()}) {
    const Output r = kvc(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
}

TEST(tokenize_cli, generate_streams_text_after_the_prompt) {
  const std::string common = "generate --synthetic --seed 1 --threads 2 " + tokenizer();
  const Output text = kvc(common + " --prompt 'The quick brown fox' --max-new-tokens 4");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("The quick brown fox", 0), 0u) << text.out;
  EXPECT_NE(text.err.find("prefill 4 tokens"), std::string::npos) << text.err;
  // The same tokens as ids: the text is their decoding.
  const Output ids = kvc("generate --synthetic --seed 1 --threads 2 --tokens 464,2068,7586,21831 "
                      "--max-new-tokens 4");
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  std::string joined;
  for (int id : nlohmann::json::parse(ids.out).get<std::vector<int>>()) joined += std::to_string(id) + ",";
  joined.pop_back();
  const Output decoded = kvc("detokenize " + tokenizer() + " --tokens " + joined);
  EXPECT_EQ(text.out, "The quick brown fox" + decoded.out + "\n");
  // An empty prompt starts from <|endoftext|>.
  const Output empty = kvc(common + " --prompt '' --max-new-tokens 2");
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.err.find("prefill 1 tokens"), std::string::npos) << empty.err;
}

}  // namespace
