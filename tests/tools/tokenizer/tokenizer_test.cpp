// The tokenizer on small hand-made vocabularies: UTF-8 handling, the byte alphabet, merge
// order, and a clear error for every malformed vocab.json / merges.txt. No network needed
// (tokenizer_npm_test.cpp checks the real vocabulary against the reference encoder).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "tokenizer.hpp"

namespace {

using gen_test::TempDir;
using nlohmann::json;

std::string spelled(unsigned char b) {
  const char32_t cp = gpt2::byte_to_unicode(b);
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// The 256 byte tokens (ids 0..255 in byte order), then `extra`, then <|endoftext|>.
json small_vocab(const std::vector<std::string>& extra) {
  json v = json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) v[spelled(static_cast<unsigned char>(b))] = id++;
  for (const std::string& e : extra) v[e] = id++;
  v["<|endoftext|>"] = id;
  return v;
}

struct Files {
  TempDir dir;
  Files(const std::string& vocab, const std::string& merges) {
    gen_test::write_file(dir / "vocab.json", vocab);
    gen_test::write_file(dir / "merges.txt", merges);
  }
  std::string path() const { return dir.path().string(); }
};

// The message of the TokenizerError that loading throws, or "" if it loads.
std::string load_error(const std::string& vocab, const std::string& merges) {
  Files f(vocab, merges);
  try {
    gpt2::Tokenizer::load(f.path());
  } catch (const gpt2::TokenizerError& e) {
    return e.what();
  }
  return "";
}

const std::string ok_merges = "#version: 0.2\nh e\nl l\nhe ll\n";
json ok_vocab() { return small_vocab({"he", "ll", "hell"}); }

TEST(tokenizer, byte_alphabet_is_gpt2s) {
  EXPECT_EQ(gpt2::byte_to_unicode('!'), U'!');
  EXPECT_EQ(gpt2::byte_to_unicode('~'), U'~');
  EXPECT_EQ(gpt2::byte_to_unicode(0xe9), U'\u00e9');
  EXPECT_EQ(gpt2::byte_to_unicode(0), U'\u0100');
  EXPECT_EQ(gpt2::byte_to_unicode(' '), U'\u0120');   // the familiar "Ġ"
  EXPECT_EQ(gpt2::byte_to_unicode('\n'), U'\u010a');  // "Ċ"
  EXPECT_EQ(gpt2::byte_to_unicode(0x7f), U'\u0121');
  EXPECT_EQ(gpt2::byte_to_unicode(0xad), U'\u0143');
  std::vector<bool> used(324, false);
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = gpt2::byte_to_unicode(static_cast<unsigned char>(b));
    ASSERT_LT(cp, 324u);
    EXPECT_FALSE(used[cp]) << b;
    used[cp] = true;
  }
}

TEST(tokenizer, sanitize_utf8_replaces_each_maximal_invalid_sequence) {
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(gpt2::sanitize_utf8("plain \xc3\xa9 \xf0\x9f\x99\x82"), "plain \xc3\xa9 \xf0\x9f\x99\x82");
  EXPECT_EQ(gpt2::sanitize_utf8("\xff"), r);
  EXPECT_EQ(gpt2::sanitize_utf8("\xf0\x9f\x98"), r);             // truncated at the end: one
  EXPECT_EQ(gpt2::sanitize_utf8("\xf0\x9f\x98x"), r + "x");      // broken by ASCII: one, then x
  EXPECT_EQ(gpt2::sanitize_utf8("\xed\xa0\x80"), r + r + r);     // a surrogate: three
  EXPECT_EQ(gpt2::sanitize_utf8("\xc0\xaf"), r + r);             // overlong: two
  EXPECT_EQ(gpt2::sanitize_utf8("\xe0\x80\xaf"), r + r + r);
  EXPECT_EQ(gpt2::sanitize_utf8("\xf4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(gpt2::sanitize_utf8("\xe2\x82\xe2\x82\xac"), r + "\xe2\x82\xac");
  EXPECT_EQ(gpt2::sanitize_utf8("\xef\xbb\xbfx"), "\xef\xbb\xbfx");  // a BOM is kept
  EXPECT_EQ(gpt2::sanitize_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(tokenizer, encodes_and_decodes_with_a_small_vocabulary) {
  Files f(ok_vocab().dump(), ok_merges);
  const gpt2::Tokenizer t = gpt2::Tokenizer::load(f.path());
  EXPECT_EQ(t.vocab_size(), 260);
  EXPECT_EQ(t.eot(), 259);
  EXPECT_EQ(t.encode(""), std::vector<int>{});
  EXPECT_EQ(t.encode("hello"), (std::vector<int>{258, 'o'}));  // "hell" "o"
  EXPECT_EQ(t.encode("hello hello"), (std::vector<int>{258, 'o', ' ', 258, 'o'}));
  EXPECT_EQ(t.encode("\xc3\xa9"), (std::vector<int>{0xc3, 0xa9}));  // bytes without merges
  EXPECT_EQ(t.encode("\xff"), (std::vector<int>{0xef, 0xbf, 0xbd}));  // read as U+FFFD
  EXPECT_EQ(t.decode(t.encode("hello, world\n")), "hello, world\n");
  EXPECT_EQ(t.decode(std::vector<int>{259}), "<|endoftext|>");
  EXPECT_EQ(t.encode("<|endoftext|>").size(), 13u);  // text, not the special token
  EXPECT_THROW(t.token_bytes(260), gpt2::TokenizerError);
}

TEST(tokenizer, long_pieces_encode_in_reasonable_time) {
  // 200 000 letters in one piece: the merge loop must not be quadratic (CTest's timeout
  // catches a hang; no timing assertion).
  Files f(ok_vocab().dump(), ok_merges);
  const gpt2::Tokenizer t = gpt2::Tokenizer::load(f.path());
  std::string word;
  for (int i = 0; i < 40000; ++i) word += "hello";
  const std::vector<int> ids = t.encode(word);
  EXPECT_EQ(ids.size(), 80000u);
  EXPECT_EQ(t.decode(ids), word);
}

TEST(tokenizer, crlf_merges_and_missing_version_line_are_accepted) {
  Files f(ok_vocab().dump(), "h e\r\nl l\r\nhe ll\r\n");
  EXPECT_EQ(gpt2::Tokenizer::load(f.path()).encode("hell"), std::vector<int>{258});
}

TEST(tokenizer, missing_files_are_named) {
  TempDir dir;
  try {
    gpt2::Tokenizer::load(dir.path().string());
    FAIL() << "loaded an empty folder";
  } catch (const gpt2::TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "vocab.json").string()), std::string::npos) << e.what();
  }
  gen_test::write_file(dir / "vocab.json", ok_vocab().dump());
  try {
    gpt2::Tokenizer::load(dir.path().string());
    FAIL() << "loaded without merges.txt";
  } catch (const gpt2::TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "merges.txt").string()), std::string::npos) << e.what();
  }
}

TEST(tokenizer, every_malformed_vocab_json_is_a_clear_error) {
  json dup = ok_vocab();
  dup["he"] = 0;
  json gap = ok_vocab();
  gap["he"] = 5000;
  json negative = ok_vocab();
  negative["he"] = -1;
  json not_int = ok_vocab();
  not_int["he"] = "256";
  json fraction = ok_vocab();
  fraction["he"] = 256.5;
  json nested = ok_vocab();
  nested["he"] = json::object({{"a", 1}});
  json outside = small_vocab({"he", "ll", "hell", "\xe2\x82\xac"});  // U+20AC is no byte
  json no_byte = ok_vocab();
  no_byte.erase(spelled('q'));
  no_byte["zz"] = 'q';
  json no_eot = ok_vocab();
  const int eot = no_eot["<|endoftext|>"];
  no_eot.erase("<|endoftext|>");
  no_eot["xx"] = eot;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"{\"a\": 0", "not valid JSON"},
      {"[1, 2]", "expected a JSON object"},
      {"{}", "0 entries"},
      {dup.dump(), "is used twice"},
      {gap.dump(), "outside 0 .. 259"},
      {negative.dump(), "outside 0 .. 259"},
      {not_int.dump(), "not a whole number"},
      {fraction.dump(), "not a whole number"},
      {nested.dump(), "object or array"},
      {outside.dump(), "outside GPT-2's byte alphabet"},
      {no_byte.dump(), "no token for byte 113"},
      {no_eot.dump(), "no \"<|endoftext|>\" token"},
      {"{\"a\": 0, \"a\": 1}", "outside 0 .. 0"},  // a repeated key: the last one counts
  };
  for (const auto& [text, expected] : cases) {
    const std::string error = load_error(text, ok_merges);
    EXPECT_NE(error.find("vocab.json: "), std::string::npos) << text.substr(0, 60) << " -> " << error;
    EXPECT_NE(error.find(expected), std::string::npos) << text.substr(0, 60) << " -> " << error;
  }
}

TEST(tokenizer, every_malformed_merges_txt_is_a_clear_error) {
  const std::string vocab = small_vocab({"he", "ll", "hell", "lo"}).dump();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"#version: 0.2\nh\n", "merges.txt:2: expected two tokens separated by one space, got \"h\""},
      {"h e l\n", "merges.txt:1: expected two tokens"},
      {"h  e\n", "merges.txt:1: expected two tokens"},
      {" h e\n", "merges.txt:1: expected two tokens"},
      {"h e\n\nl l\n", "merges.txt:2: expected two tokens"},
      {"h e\nq Z\xe2\x82\xac\n", "merges.txt:2: \"Z\xe2\x82\xac\" is not in vocab.json"},
      {"h e\nh l\n", "merges.txt:2: the merged token \"hl\" is not in vocab.json"},
      {"h e\nl l\nh e\n", "merges.txt:3: the pair \"h e\" is listed twice"},
      {"#version: 0.2\n", "merges.txt: no merges"},
      {"", "merges.txt: no merges"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string error = load_error(vocab, text);
    EXPECT_NE(error.find(expected), std::string::npos) << text << " -> " << error;
  }
}

TEST(tokenizer, oversized_files_are_refused_without_reading_them) {
  Files f(ok_vocab().dump(), ok_merges);
  // A sparse 65 MiB file: larger than any tokenizer file.
  {
    std::ofstream big(f.dir / "vocab.json", std::ios::binary | std::ios::trunc);
    big.seekp((65 << 20) - 1);
    big.put(' ');
  }
  try {
    gpt2::Tokenizer::load(f.path());
    FAIL() << "loaded a 65 MiB vocab.json";
  } catch (const gpt2::TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("limit 64 MiB"), std::string::npos) << e.what();
  }
}

}  // namespace
