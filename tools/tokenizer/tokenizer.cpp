// GPT-2's byte-level BPE: loading vocab.json and merges.txt, pre-tokenization with PCRE2,
// merges by rank, decoding. See tokenizer.hpp for what is computed.
#include "tokenizer.hpp"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace gpt2 {

namespace {

// Both files are about 1 MB and 0.5 MB for GPT-2; anything above this is not a
// tokenizer file.
constexpr std::streamoff MAX_FILE_BYTES = 64 << 20;
// Ids are kept below this, so that a pair of them packs into 64 bits with room to spare.
constexpr int64_t MAX_VOCAB = 1 << 24;

// ---- UTF-8 ------------------------------------------------------------------------------

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The WHATWG Encoding Standard's UTF-8 decoder, one byte at a time. feed() returns the
// number of code points it produced in cps (0, 1 or 2: a replacement plus the byte that
// broke a sequence, when that byte is ASCII or starts nothing). Use finish() at the end.
struct Utf8Decoder {
  char32_t cp = 0;
  int needed = 0, seen = 0;
  int errors = 0;  // replacements made so far
  unsigned lower = 0x80, upper = 0xBF;
  static constexpr char32_t REPLACEMENT = 0xFFFD;

  int feed(unsigned char b, char32_t cps[2]) {
    if (needed == 0) return start(b, cps);
    if (b < lower || b > upper) {
      // The sequence is broken: a replacement, then `b` is read again from scratch.
      reset();
      cps[0] = REPLACEMENT;
      ++errors;
      return 1 + start(b, cps + 1);
    }
    lower = 0x80;
    upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
    if (++seen < needed) return 0;
    cps[0] = cp;
    reset();
    return 1;
  }
  // True if the input ended inside a sequence (one more replacement).
  bool finish() {
    const bool pending = needed != 0;
    errors += pending;
    reset();
    return pending;
  }

 private:
  int start(unsigned char b, char32_t cps[1]) {
    if (b < 0x80) {
      cps[0] = b;
      return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) {
      needed = 1;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      if (b == 0xE0) lower = 0xA0;  // no overlong 3-byte forms
      if (b == 0xED) upper = 0x9F;  // no surrogates
      needed = 2;
      cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      if (b == 0xF0) lower = 0x90;  // no overlong 4-byte forms
      if (b == 0xF4) upper = 0x8F;  // nothing above U+10FFFF
      needed = 3;
      cp = b & 0x07;
    } else {
      cps[0] = REPLACEMENT;  // 80..C1, F5..FF cannot start a sequence
      ++errors;
      return 1;
    }
    return 0;
  }
  void reset() {
    cp = 0;
    needed = seen = 0;
    lower = 0x80;
    upper = 0xBF;
  }
};

// The code points of `text`, or false if it is not valid UTF-8.
bool code_points(std::string_view text, std::vector<char32_t>& out) {
  out.clear();
  Utf8Decoder d;
  char32_t cps[2];
  for (unsigned char b : text) {
    const int n = d.feed(b, cps);
    out.insert(out.end(), cps, cps + n);
  }
  d.finish();
  return d.errors == 0;
}

// ---- GPT-2's byte alphabet -----------------------------------------------------------

struct Alphabet {
  std::array<char32_t, 256> of_byte{};  // byte -> code point
  std::array<int, 324> byte_of{};       // code point -> byte, or -1 (code points < 324)

  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      of_byte[b] = printable ? static_cast<char32_t>(b) : next++;
      byte_of[of_byte[b]] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

// The bytes a token string of vocab.json or merges.txt stands for, or false if one of its
// characters is not in the byte alphabet.
bool token_bytes_of(std::string_view spelled, std::vector<char32_t>& scratch, std::string& out) {
  out.clear();
  if (!code_points(spelled, scratch)) return false;
  for (char32_t cp : scratch) {
    if (cp >= alphabet().byte_of.size() || alphabet().byte_of[cp] < 0) return false;
    out += static_cast<char>(alphabet().byte_of[cp]);
  }
  return true;
}

std::string printable(std::string_view s) {
  std::string shown(s.substr(0, 60));
  if (s.size() > 60) shown += "...";
  return shown;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError(path + ": cannot open (is the tokenizer folder right?)");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw TokenizerError(path + ": cannot read");
  if (size > MAX_FILE_BYTES) {
    throw TokenizerError(path + ": " + std::to_string(size) +
                         " bytes, larger than any tokenizer file (limit 64 MiB)");
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) throw TokenizerError(path + ": cannot read");
  return bytes;
}

// ---- Pre-tokenization ------------------------------------------------------------------

// GPT-2's pattern with \s spelled out as JavaScript's white space (see tokenizer.hpp).
// Anchored: every character matches one of the alternatives, so each match starts where
// the previous one ended.
constexpr const char* PATTERN =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+)"
    R"(| ?[^\t-\r\p{Zs}\x{2028}\x{2029}\x{FEFF}\p{L}\p{N}]+)"
    R"(|[\t-\r\p{Zs}\x{2028}\x{2029}\x{FEFF}]+(?![^\t-\r\p{Zs}\x{2028}\x{2029}\x{FEFF}]))"
    R"(|[\t-\r\p{Zs}\x{2028}\x{2029}\x{FEFF}]+)";

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

std::unique_ptr<pcre2_code, CodeDeleter> compile_pattern(bool& jit) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(PATTERN), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &error, &offset,
                                   nullptr);
  if (!code) {
    throw TokenizerError("the pre-tokenization pattern does not compile at offset " +
                         std::to_string(offset) + ": " + pcre2_message(error));
  }
  jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return std::unique_ptr<pcre2_code, CodeDeleter>(code);
}

}  // namespace

std::string sanitize_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  Utf8Decoder d;
  char32_t cps[2];
  for (unsigned char b : bytes) {
    if (b < 0x80 && d.needed == 0) {
      out += static_cast<char>(b);  // fast path: ASCII outside a sequence
      continue;
    }
    const int n = d.feed(b, cps);
    for (int i = 0; i < n; ++i) append_utf8(out, cps[i]);
  }
  if (d.finish()) append_utf8(out, Utf8Decoder::REPLACEMENT);
  return out;
}

char32_t byte_to_unicode(unsigned char b) { return alphabet().of_byte[b]; }

// ---- The tokenizer ---------------------------------------------------------------------

namespace {

struct Merge {
  int rank;    // line order in merges.txt, 0 = best
  int result;  // id of the merged token
};

// Merges by token pair: open addressing with linear probing, at most half full. (Finding a
// pair is most of the work of merging; std::unordered_map's chained nodes made encoding
// about twice as slow.)
class MergeTable {
 public:
  // False if the pair is there already.
  bool insert(int left, int right, Merge m) {
    if (2 * (count_ + 1) > keys_.size()) grow();
    size_t i = slot(key(left, right));
    if (keys_[i] == key(left, right)) return false;
    keys_[i] = key(left, right);
    values_[i] = m;
    ++count_;
    return true;
  }
  const Merge* find(int left, int right) const {
    if (keys_.empty()) return nullptr;
    const size_t i = slot(key(left, right));
    return keys_[i] == EMPTY ? nullptr : &values_[i];
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint64_t EMPTY = ~uint64_t{0};  // ids are below 2^24: never a key
  static uint64_t key(int left, int right) {
    return static_cast<uint64_t>(left) << 32 | static_cast<uint32_t>(right);
  }
  // The key's slot, or the empty slot where it would go.
  size_t slot(uint64_t k) const {
    uint64_t h = k * 0x9E3779B97F4A7C15ull;  // Fibonacci hashing: the high bits are mixed
    size_t i = static_cast<size_t>(h >> 32) & (keys_.size() - 1);
    while (keys_[i] != k && keys_[i] != EMPTY) i = (i + 1) & (keys_.size() - 1);
    return i;
  }
  void grow() {
    std::vector<uint64_t> old_keys(std::max<size_t>(64, 2 * keys_.size()), EMPTY);
    std::vector<Merge> old_values(old_keys.size());
    old_keys.swap(keys_);
    old_values.swap(values_);
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != EMPTY) {
        const size_t j = slot(old_keys[i]);
        keys_[j] = old_keys[i];
        values_[j] = old_values[i];
      }
    }
  }
  std::vector<uint64_t> keys_;  // [capacity, a power of 2] (left id << 32 | right id) or EMPTY
  std::vector<Merge> values_;   // [capacity]
  size_t count_ = 0;
};

// What the two files say: each token's bytes and the merges.
struct Vocabulary {
  std::vector<std::string> bytes_of;  // [vocab] id -> its bytes
  std::array<int, 256> byte_token{};  // byte -> id of the one-byte token
  MergeTable merges;
  int eot = -1;

  const Merge* find_merge(int left, int right) const { return merges.find(left, right); }
  void load_vocab(const std::string& path, std::unordered_map<std::string, int>& ids);
  void load_merges(const std::string& path, const std::unordered_map<std::string, int>& ids);
};

void Vocabulary::load_vocab(const std::string& path,
                                 std::unordered_map<std::string, int>& ids) {
  const std::string text = read_file(path);
  nlohmann::json j;
  try {
    // Reject nesting as the parser meets it: a vocabulary is one flat object.
    j = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t event,
                                        nlohmann::json&) {
      if (depth >= 1 && (event == nlohmann::json::parse_event_t::object_start ||
                        event == nlohmann::json::parse_event_t::array_start)) {
        throw TokenizerError(path + ": a value is an object or array; expected token ids");
      }
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw TokenizerError(path + ": expected a JSON object {token: id, ...}");
  if (j.empty() || static_cast<int64_t>(j.size()) > MAX_VOCAB) {
    throw TokenizerError(path + ": " + std::to_string(j.size()) +
                         " entries; expected 1 .. 16777216");
  }
  bytes_of.assign(j.size(), std::string());
  std::vector<bool> seen(j.size(), false);
  std::vector<char32_t> scratch;
  std::string bytes;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_number_integer()) {
      throw TokenizerError(path + ": the id of \"" + printable(key) + "\" is " + value.dump() +
                           ", not a whole number");
    }
    const int64_t id = value.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(j.size())) {
      throw TokenizerError(path + ": the id of \"" + printable(key) + "\" is " +
                           std::to_string(id) + ", outside 0 .. " + std::to_string(j.size() - 1) +
                           " (ids must number the entries from 0)");
    }
    if (seen[id]) throw TokenizerError(path + ": id " + std::to_string(id) + " is used twice");
    if (!token_bytes_of(key, scratch, bytes)) {
      throw TokenizerError(path + ": token \"" + printable(key) +
                           "\" has a character outside GPT-2's byte alphabet");
    }
    seen[id] = true;
    bytes_of[id] = bytes;
    ids.emplace(key, static_cast<int>(id));
  }
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    append_utf8(spelled, byte_to_unicode(static_cast<unsigned char>(b)));
    auto it = ids.find(spelled);
    if (it == ids.end()) {
      throw TokenizerError(path + ": no token for byte " + std::to_string(b) + " (\"" + spelled +
                           "\"); a byte-level vocabulary has all 256");
    }
    byte_token[b] = it->second;
  }
  auto it = ids.find("<|endoftext|>");
  if (it == ids.end()) throw TokenizerError(path + ": no \"<|endoftext|>\" token");
  eot = it->second;
}

void Vocabulary::load_merges(const std::string& path,
                                  const std::unordered_map<std::string, int>& ids) {
  const std::string text = read_file(path);
  size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.starts_with("#version")) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    const size_t space = line.find(' ');
    if (line.empty() || space == 0 || space == std::string_view::npos ||
        space + 1 == line.size() || line.find(' ', space + 1) != std::string_view::npos) {
      throw TokenizerError(where + "expected two tokens separated by one space, got \"" +
                           printable(line) + "\"");
    }
    const std::string left(line.substr(0, space)), right(line.substr(space + 1));
    const auto l = ids.find(left), r = ids.find(right), m = ids.find(left + right);
    if (l == ids.end()) throw TokenizerError(where + "\"" + printable(left) + "\" is not in vocab.json");
    if (r == ids.end()) throw TokenizerError(where + "\"" + printable(right) + "\" is not in vocab.json");
    if (m == ids.end()) {
      throw TokenizerError(where + "the merged token \"" + printable(left + right) +
                           "\" is not in vocab.json");
    }
    const int rank = static_cast<int>(merges.size());
    if (!merges.insert(l->second, r->second, Merge{rank, m->second})) {
      throw TokenizerError(where + "the pair \"" + printable(line) + "\" is listed twice");
    }
  }
  if (merges.size() == 0) throw TokenizerError(path + ": no merges");
}

}  // namespace

struct Tokenizer::Impl {
  Vocabulary vocab;
  std::unique_ptr<pcre2_code, CodeDeleter> pattern;
  bool jit = false;
};

Tokenizer Tokenizer::load(const std::string& dir) {
  return load(dir + "/vocab.json", dir + "/merges.txt");
}

Tokenizer Tokenizer::load(const std::string& vocab_json_path, const std::string& merges_txt_path) {
  auto impl = std::make_unique<Impl>();
  std::unordered_map<std::string, int> ids;  // token as spelled in the files -> id
  impl->vocab.load_vocab(vocab_json_path, ids);
  impl->vocab.load_merges(merges_txt_path, ids);
  impl->pattern = compile_pattern(impl->jit);
  return Tokenizer(std::move(impl));
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

int Tokenizer::vocab_size() const { return static_cast<int>(impl_->vocab.bytes_of.size()); }
int Tokenizer::eot() const { return impl_->vocab.eot; }
bool Tokenizer::jit() const { return impl_->jit; }

const std::string& Tokenizer::token_bytes(int id) const {
  if (id < 0 || id >= vocab_size()) {
    throw TokenizerError("token id " + std::to_string(id) + " is not in the vocabulary (0 .. " +
                         std::to_string(vocab_size() - 1) + ")");
  }
  return impl_->vocab.bytes_of[id];
}

std::string Tokenizer::decode(std::span<const int> ids) const {
  std::string out;
  for (int id : ids) out += token_bytes(id);
  return out;
}

// ---- Encoding ----------------------------------------------------------------------------

namespace {

// Merges one piece's tokens in place. A heap of candidate pairs ordered by (rank, position)
// gives the best pair's occurrences left to right. A pair made by a merge that ranks better
// than the merge being done waits until every occurrence of the current pair is merged:
// the reference merges all occurrences of one pair in one pass before it looks again.
class PieceMerger {
 public:
  explicit PieceMerger(const Vocabulary& t) : t_(t) {}

  // ids: one token per byte on entry, the piece's tokens on return.
  void merge(std::vector<int>& ids) {
    const int n = static_cast<int>(ids.size());
    next_.resize(n);
    prev_.resize(n);
    for (int i = 0; i < n; ++i) {
      next_[i] = i + 1 < n ? i + 1 : -1;
      prev_[i] = i - 1;
    }
    heap_.clear();
    waiting_.clear();
    for (int i = 0; i + 1 < n; ++i) consider(ids, i, i + 1, -1);
    int current_rank = -1;
    while (!heap_.empty() || !waiting_.empty()) {
      if (!waiting_.empty() && (heap_.empty() || heap_.front().rank != current_rank)) {
        for (const Candidate& c : waiting_) push(heap_, c);
        waiting_.clear();
        current_rank = -1;
        continue;
      }
      std::pop_heap(heap_.begin(), heap_.end(), later);
      const Candidate c = heap_.back();
      heap_.pop_back();
      if (!valid(ids, c)) continue;
      current_rank = c.rank;
      apply(ids, c);
    }
    int kept = 0;
    for (int i = 0; i != -1; i = next_[i]) ids[kept++] = ids[i];
    ids.resize(kept);
  }

 private:
  static constexpr int REMOVED = -2;  // prev_ of a token merged into its left neighbour
  struct Candidate {
    int rank, left, right, left_id, right_id;  // a pair of live tokens at left, right
    int result;                                // the id they merge into
  };
  static bool later(const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
  static void push(std::vector<Candidate>& heap, const Candidate& c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), later);
  }
  // Queues the pair (left, right) if it has a merge; pairs ranking better than the merge
  // being done wait (see the class comment).
  void consider(const std::vector<int>& ids, int left, int right, int current_rank) {
    const auto* m = t_.find_merge(ids[left], ids[right]);
    if (!m) return;
    const Candidate c{m->rank, left, right, ids[left], ids[right], m->result};
    if (m->rank < current_rank) {
      waiting_.push_back(c);
    } else {
      push(heap_, c);
    }
  }
  bool valid(const std::vector<int>& ids, const Candidate& c) const {
    return prev_[c.left] != REMOVED && next_[c.left] == c.right && ids[c.left] == c.left_id &&
           ids[c.right] == c.right_id;
  }
  void apply(std::vector<int>& ids, const Candidate& c) {
    ids[c.left] = c.result;
    const int after = next_[c.right];
    next_[c.left] = after;
    if (after != -1) prev_[after] = c.left;
    prev_[c.right] = REMOVED;
    next_[c.right] = -1;
    if (prev_[c.left] >= 0) consider(ids, prev_[c.left], c.left, c.rank);
    if (after != -1) consider(ids, c.left, after, c.rank);
  }

  const Vocabulary& t_;
  std::vector<int> next_, prev_;  // [piece bytes] the live tokens as a linked list (-1: none)
  std::vector<Candidate> heap_, waiting_;
};

}  // namespace

std::vector<int> Tokenizer::encode(std::string_view text) const {
  const Vocabulary& t = impl_->vocab;
  const std::string utf8 = sanitize_utf8(text);
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(impl_->pattern.get(), nullptr));
  if (!match) throw std::bad_alloc();
  // Pieces already merged in this call: piece -> (first, count) in `cached`.
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
  cache.reserve(utf8.size() / 32);
  std::vector<int> cached, ids, out;
  out.reserve(utf8.size() / 3);
  PieceMerger merger(t);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(utf8.data());
  size_t offset = 0;
  while (offset < utf8.size()) {
    const int rc = pcre2_match(impl_->pattern.get(), subject, utf8.size(), offset, PCRE2_NO_UTF_CHECK,
                               match.get(), nullptr);
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
    if (rc < 0 || ov[1] <= offset) {
      // Cannot happen: every character matches an alternative of the pattern.
      throw TokenizerError("pre-tokenization failed at byte " + std::to_string(offset) + ": " +
                           (rc < 0 ? pcre2_message(rc) : "empty match"));
    }
    const std::string_view piece(utf8.data() + offset, ov[1] - offset);
    offset = ov[1];
    if (piece.size() == 1) {
      out.push_back(t.byte_token[static_cast<unsigned char>(piece[0])]);
      continue;
    }
    auto [hit, is_new] = cache.try_emplace(piece);
    if (is_new) {
      ids.clear();
      for (unsigned char b : piece) ids.push_back(t.byte_token[b]);
      merger.merge(ids);
      hit->second = {static_cast<uint32_t>(cached.size()), static_cast<uint32_t>(ids.size())};
      cached.insert(cached.end(), ids.begin(), ids.end());
    }
    out.insert(out.end(), cached.begin() + hit->second.first,
               cached.begin() + hit->second.first + hit->second.second);
  }
  return out;
}

}  // namespace gpt2
