#include "sandbox/crash.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "sandbox/process.hpp"
#include "wire/crash_record.hpp"

#ifndef KVCOURSE_SOURCE_DIR
#define KVCOURSE_SOURCE_DIR ""
#endif

namespace course {

namespace {

constexpr int kSymbolizeMillis = 5000;
constexpr size_t kMaxSymbolizerOutput = 256 * 1024;

// Runs argv (no shell) and returns its standard output (up to the limit); empty when it
// cannot start or takes longer than `millis`.
std::string run_and_read(const std::vector<std::string>& args, int millis) {
  const Captured c = capture_output(args, kMaxSymbolizerOutput, std::chrono::milliseconds(millis), true);
  return c.timed_out ? "" : c.output;
}

// The addresses to ask about: a return address points after its call, so one byte back
// lands on the call's own line.
std::vector<std::string> addresses(const std::string& record) {
  std::vector<std::string> out;
  CrashRecord r;
  const size_t header = offsetof(CrashRecord, frames);
  if (record.size() < header || record.size() > sizeof r) return out;
  std::memcpy(&r, record.data(), record.size());
  if (std::memcmp(r.magic, "KVCR", 4) != 0 || r.count > kMaxCrashFrames ||
      record.size() != header + r.count * sizeof(uint64_t))
    return out;
  for (uint32_t i = 0; i < r.count; ++i) {
    if (r.frames[i] == 0) continue;
    const uint64_t at = i == 0 && (r.flags & kCrashExactPc) ? r.frames[i] : r.frames[i] - 1;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(at));
    out.push_back(hex);
  }
  return out;
}

// "course::KVCache::key(int, int) const" -> "KVCache::key".
std::string short_function(std::string name) {
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0 && i > 0) {
      name.resize(i);
      break;
    }
  }
  if (name.rfind("course::", 0) == 0) name.erase(0, 8);
  return name;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A frame of the code under test: not the system's, not the runner's main or bindings,
// not the model library's.
bool is_learner_frame(const CodeFrame& f) {
  const std::string root = KVCOURSE_SOURCE_DIR;
  if (f.file.empty() || f.file[0] == '?' || f.line <= 0 || starts_with(f.file, "/usr/")) return false;
  if (!root.empty() && (starts_with(f.file, root + "/grader/") || starts_with(f.file, root + "/model/"))) return false;
  return true;
}

std::string shown(const CodeFrame& f) {
  const std::string root = std::string(KVCOURSE_SOURCE_DIR) + "/";
  std::string file = root.size() > 1 && starts_with(f.file, root) ? f.file.substr(root.size()) : f.file;
  return f.function + " (" + file + ":" + std::to_string(f.line) + ")";
}

// Removes all balanced <...> groups: "std::vector<_Tp, _Alloc>::operator[]" -> "std::vector::operator[]".
std::string without_template_arguments(const std::string& text) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

}  // namespace

std::vector<CodeFrame> parse_addr2line(const std::string& text) {
  std::vector<CodeFrame> frames;
  std::istringstream in(text);
  std::string line, function;
  bool have_function = false;
  while (std::getline(in, line)) {
    if (starts_with(line, "0x")) {
      have_function = false;
      continue;
    }
    if (!have_function) {
      function = short_function(line);
      have_function = true;
      continue;
    }
    have_function = false;
    CodeFrame f;
    f.function = function;
    // "file:line" or "file:line (discriminator 2)"; "??:0" or "??:?" when unknown.
    const size_t colon = line.rfind(':');
    if (colon == std::string::npos) continue;
    // Lexically normal: a build that compiles with relative paths (a compiler cache's
    // base_dir, say) names "build/tests/../../src/kvcache.cpp".
    f.file = std::filesystem::path(line.substr(0, colon)).lexically_normal().string();
    f.line = std::atoi(line.c_str() + colon + 1);
    frames.push_back(f);
  }
  return frames;
}

std::string failed_check(const std::string& output) {
  const std::string tail = "' failed.";
  const size_t end = output.rfind(tail);
  if (end == std::string::npos) return "";
  const size_t open = output.rfind(": Assertion '", end);
  if (open == std::string::npos) return "";
  const std::string condition = output.substr(open + 13, end - open - 13);
  const size_t line_start = output.rfind('\n', open) == std::string::npos ? 0 : output.rfind('\n', open) + 1;
  // "file:line: return-type function(params) [with ...]" before ": Assertion".
  std::string where = output.substr(line_start, open - line_start);
  if (size_t with = where.find(" [with "); with != std::string::npos) where.resize(with);
  const size_t colon = where.find(": ");
  if (colon != std::string::npos) where.erase(0, colon + 2);
  where = without_template_arguments(where);
  if (size_t paren = where.find('('); paren != std::string::npos) where.resize(paren);
  if (size_t space = where.rfind(' '); space != std::string::npos) where.erase(0, space + 1);
  std::string text = "a library check failed";
  if (where.find("operator[]") != std::string::npos || condition.find("size()") != std::string::npos)
    text = "a bounds check failed";
  return text + (where.empty() ? "" : " in " + where) + " (" + condition + ")";
}

CrashSite locate_crash(const std::string& executable, const std::string& record, const std::string& output) {
  CrashSite site;
  site.check = failed_check(output);
  const std::vector<std::string> at = addresses(record);
  if (at.empty()) return site;
  std::vector<std::string> args = {"addr2line", "-a", "-f", "-C", "-i", "-e", executable};
  args.insert(args.end(), at.begin(), at.end());
  std::vector<CodeFrame> mine;
  for (const CodeFrame& f : parse_addr2line(run_and_read(args, kSymbolizeMillis))) {
    if (!is_learner_frame(f)) continue;
    if (!mine.empty() && mine.back().function == f.function && mine.back().file == f.file) continue;
    mine.push_back(f);
  }
  if (mine.empty()) return site;
  site.where = "in " + shown(mine[0]);
  if (mine.size() > 1) site.where += ", called from " + shown(mine[1]);
  return site;
}

}  // namespace course
