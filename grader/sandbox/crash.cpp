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

// The frames of a crash record, innermost first; empty when it is malformed.
std::vector<uint64_t> record_frames(const std::string& record, bool& exact_first) {
  CrashRecord r;
  const size_t header = offsetof(CrashRecord, frames);
  if (record.size() < header || record.size() > sizeof r) return {};
  std::memcpy(&r, record.data(), record.size());
  if (std::memcmp(r.magic, "KVCR", 4) != 0 || r.count > kMaxCrashFrames ||
      record.size() != header + r.count * sizeof(uint64_t))
    return {};
  exact_first = (r.flags & kCrashExactPc) != 0;
  return std::vector<uint64_t>(r.frames, r.frames + r.count);
}

// The addresses to ask about: a return address points after its call, so one byte back
// lands on the call's own line.
std::vector<std::string> addresses(const std::vector<uint64_t>& frames, bool exact_first) {
  std::vector<std::string> out;
  for (size_t i = 0; i < frames.size() && i < size_t(kMaxCrashFrames); ++i) {
    if (frames[i] == 0) continue;
    const uint64_t at = i == 0 && exact_first ? frames[i] : frames[i] - 1;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(at));
    out.push_back(hex);
  }
  return out;
}

// One component of a qualified name without its parameter list: "key(int, int) const"
// -> "key", "operator()(int)" -> "operator()"; template arguments are kept.
std::string without_parameters(const std::string& part) {
  size_t from = 0;
  if (part.rfind("operator", 0) == 0) from = part.rfind("operator()", 0) == 0 ? 10 : 8;
  int depth = 0;
  for (size_t i = from; i < part.size(); ++i) {
    if (part[i] == '<') ++depth;
    if (part[i] == '>' && depth > 0) --depth;
    if (part[i] == '(' && depth == 0) return part.substr(0, i);
  }
  return part;
}

// The "::"-separated components of a demangled name, each with its brackets whole.
std::vector<std::string> name_components(const std::string& name) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0) --depth;
    if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      parts.emplace_back();
      ++i;
      continue;
    }
    parts.back() += c;
  }
  return parts;
}

// The function as the learner wrote it: "course::KVCache::key(int, int) const" ->
// "KVCache::key"; "course::(anonymous namespace)::attend(float const*)" -> "attend";
// "float course::dot<4>(...)" -> "dot<4>"; "course::decode_step(...)::{lambda(int)#1}::
// operator()(int) const" -> "the lambda in decode_step".
std::string short_function(std::string name) {
  for (size_t at; (at = name.find("(anonymous namespace)::")) != std::string::npos;)
    name.erase(at, 23);
  std::vector<std::string> parts;
  for (const std::string& part : name_components(name)) parts.push_back(without_parameters(part));
  // A template's return type comes first: "float course" -> "course".
  int depth = 0;
  for (size_t i = 0, space = std::string::npos; i <= parts[0].size(); ++i) {
    if (i == parts[0].size()) {
      if (space != std::string::npos) parts[0].erase(0, space + 1);
      break;
    }
    if (parts[0][i] == '<') ++depth;
    if (parts[0][i] == '>' && depth > 0) --depth;
    if (parts[0][i] == ' ' && depth == 0 && parts[0].rfind("operator", 0) != 0) space = i;
  }
  if (parts.size() > 1 && parts[0] == "course") parts.erase(parts.begin());
  std::string out;
  for (const std::string& part : parts) {
    if (part.rfind("{lambda", 0) == 0) return out.empty() ? "a lambda" : "the lambda in " + out;
    out += (out.empty() ? "" : "::") + part;
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The file as this copy of the course has it. An object a shared compiler cache made in
// another copy of the course names that copy's path (/elsewhere/src/kvcache.cpp); the
// cache reused it because the source was the same, so the same file here, found by the
// longest tail of the path that exists in this course, holds the same lines.
std::string in_this_course(const std::string& file) {
  const std::string root = KVCOURSE_SOURCE_DIR;
  if (root.empty() || file.empty() || file[0] != '/' || starts_with(file, root + "/") ||
      starts_with(file, "/usr/"))
    return file;
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    std::error_code error;
    const std::string here = root + file.substr(slash);
    if (std::filesystem::is_regular_file(here, error)) return here;
  }
  return file;
}

// A frame of the code under test: not the system's, not the runner's main or bindings
// (grader/runner/, and each stage's stages/<folder>/grader/), not the model library's.
bool is_learner_frame(const CodeFrame& f) {
  const std::string root = KVCOURSE_SOURCE_DIR;
  if (f.file.empty() || f.file[0] == '?' || f.line <= 0 || starts_with(f.file, "/usr/")) return false;
  if (!root.empty() && (starts_with(f.file, root + "/grader/") || starts_with(f.file, root + "/stages/") ||
                        starts_with(f.file, root + "/model/")))
    return false;
  return true;
}

std::string shown(const CodeFrame& f) {
  const std::string root = std::string(KVCOURSE_SOURCE_DIR) + "/";
  std::string file = root.size() > 1 && starts_with(f.file, root) ? f.file.substr(root.size()) : f.file;
  const std::string at = file + ":" + std::to_string(f.line);
  return f.function.empty() || f.function == "??" ? at : f.function + " (" + at + ")";
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

std::string locate_frames(const std::string& executable, const std::vector<uint64_t>& frames,
                          bool exact_first) {
  const std::vector<std::string> at = addresses(frames, exact_first);
  if (at.empty()) return "";
  std::vector<std::string> args = {"addr2line", "-a", "-f", "-C", "-i", "-e", executable};
  args.insert(args.end(), at.begin(), at.end());
  std::vector<CodeFrame> all = parse_addr2line(run_and_read(args, kSymbolizeMillis));
  for (CodeFrame& f : all) f.file = in_this_course(f.file);
  std::vector<CodeFrame> mine;
  for (const CodeFrame& f : all) {
    if (!is_learner_frame(f)) continue;
    if (!mine.empty() && mine.back().function == f.function && mine.back().file == f.file) continue;
    mine.push_back(f);
  }
  if (!mine.empty()) {
    std::string where = "in " + shown(mine[0]);
    if (mine.size() > 1) where += ", called from " + shown(mine[1]);
    return where;
  }
  // No frame of the code under test has a line: the innermost function without debug info
  // that the symbol table names (not the runner's own __cxa_throw, which a sanitizer's
  // backtrace() interceptor leaves on the stack), and why no more is known. Frames with a
  // line here are the course's own (the runner, the model, the system): passed over.
  for (const CodeFrame& f : all) {
    if (f.function.empty() || f.function == "??" || f.function == "__cxa_throw") continue;
    if (!f.file.empty() && f.file[0] != '?') continue;
    return "in " + f.function + " (" + kNoDebugInfo + ")";
  }
  return "";
}

CrashSite locate_crash(const std::string& executable, const std::string& record,
                       const std::string& output) {
  CrashSite site;
  site.check = failed_check(output);
  bool exact_first = false;
  const std::vector<uint64_t> frames = record_frames(record, exact_first);
  site.where = locate_frames(executable, frames, exact_first);
  return site;
}

}  // namespace course
