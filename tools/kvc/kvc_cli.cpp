// Errors, exit codes and small helpers shared by kvc's subcommands (kvc_cli.hpp).
#include "kvc_cli.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gpt2.hpp"
#include "tokenizer.hpp"

namespace kvc {

int run_guarded(const char* program, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const BadInput& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const gpt2::ModelError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const gpt2::TokenizerError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const Failure& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
    return 1;
  }
}

std::vector<int> parse_tokens(const std::string& text, const std::string& option) {
  std::vector<int> tokens;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    long long value = 0;
    const char* first = item.data();
    const char* last = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (item.empty() || ec == std::errc::invalid_argument || ptr != last) {
      throw BadInput(option + ": '" + item + "' is not a whole number (expected e.g. 464,2068,7586)");
    }
    if (ec == std::errc::result_out_of_range || value < INT32_MIN || value > INT32_MAX) {
      throw BadInput(option + ": token id " + item + " is out of range");
    }
    tokens.push_back(static_cast<int>(value));
    start = end + 1;
  }
  return tokens;
}

void write_stdout(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

std::string read_text_file(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(option + ": cannot open " + path);
  std::stringstream s;
  s << in.rdbuf();
  if (in.bad()) throw BadInput(option + ": cannot read " + path);
  return s.str();
}

}  // namespace kvc
