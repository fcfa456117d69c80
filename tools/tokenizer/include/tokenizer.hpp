// GPT-2's byte-level BPE tokenizer: text (bytes) to token ids and back.
//
// It reads Hugging Face's two files for GPT-2, vocab.json (token string -> id) and
// merges.txt (the merges, best first), and encodes exactly like OpenAI's encoder.py and
// the npm package gpt-3-encoder 1.1.4, which the tests compare it with:
//
//   1. The input bytes are read as UTF-8. Bytes that are not valid UTF-8 become U+FFFD,
//      one per maximal invalid subsequence: what a WHATWG TextDecoder (Node.js, browsers)
//      and Python's errors="replace" do. The npm encoder works on JavaScript strings, so
//      this is what it sees when it is given those bytes; valid text is kept as it is
//      (a leading byte order mark too).
//   2. Pre-tokenization splits the text into pieces with GPT-2's pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      run with PCRE2 in UTF mode, where \s is JavaScript's white space (tab, LF, VT, FF,
//      CR, the Zs separators, U+2028, U+2029 and U+FEFF). PCRE2 10.42 knows Unicode 14;
//      a letter or digit assigned later is "other" here.
//   3. Each piece's UTF-8 bytes are spelled with GPT-2's byte-to-unicode alphabet and
//      merged pair by pair: always the adjacent pair with the best (lowest) rank in
//      merges.txt, all its non-overlapping occurrences left to right, until no adjacent
//      pair has a rank. The pieces' tokens, in order, are the result.
//
// decode() concatenates the tokens' bytes: decode(encode(text)) == text for valid UTF-8
// (for invalid bytes it gives the text with U+FFFD, see 1). "<|endoftext|>" is one token
// (eot(), 50256 for GPT-2) that encode() never makes: the same characters in a text are
// ordinary text, as in the npm encoder.
#pragma once

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpt2 {

// A missing or malformed vocab.json / merges.txt, or a token id outside the vocabulary.
// The message names the file (and line or entry) and the problem.
struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Tokenizer {
 public:
  // Loads `dir`/vocab.json and `dir`/merges.txt.
  static Tokenizer load(const std::string& dir);
  static Tokenizer load(const std::string& vocab_json_path, const std::string& merges_txt_path);

  // Token ids of `text` (any bytes). Thread-safe; each call keeps its own cache of the
  // pieces it has already merged.
  std::vector<int> encode(std::string_view text) const;

  // The bytes of the tokens, concatenated. Throws TokenizerError for an id outside
  // 0 .. vocab_size()-1.
  std::string decode(std::span<const int> ids) const;
  // One token's bytes (for streaming; a character may span several tokens).
  const std::string& token_bytes(int id) const;

  int vocab_size() const;
  int eot() const;  // the id of "<|endoftext|>"
  // True when the pre-tokenization pattern runs JIT-compiled (PCRE2's JIT is available).
  bool jit() const;

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Step 1 above: `bytes` as valid UTF-8, each maximal invalid subsequence replaced by
// U+FFFD (EF BF BD), as the WHATWG Encoding Standard's UTF-8 decoder does.
std::string sanitize_utf8(std::string_view bytes);

// GPT-2's byte-to-unicode alphabet: byte b is written as this code point in vocab.json
// and merges.txt (printable Latin-1 bytes as themselves, the other 68 as U+0100 ..).
char32_t byte_to_unicode(unsigned char b);

}  // namespace gpt2
