// Where a runner crashed, in the learner's terms: the crash record its handler wrote
// (wire/crash_record.hpp) symbolized with addr2line against the runner's executable (it
// carries debug info), keeping only the learner's frames, plus the text of a failed
// library check (_GLIBCXX_ASSERTIONS) found in what the runner printed.
#pragma once

#include <string>
#include <vector>

namespace course {

struct CrashSite {
  // "in KVCache::key (src/kvcache.cpp:31), called from run_cache_plan
  // (adapters/adapters.cpp:52)"; empty when nothing of the learner's is on the stack.
  std::string where;
  // "a bounds check failed in std::vector::operator[] (__n < this->size())"; or empty.
  std::string check;
};

CrashSite locate_crash(const std::string& executable, const std::string& record, const std::string& output);

struct CodeFrame {
  std::string function;  // demangled, without its parameters
  std::string file;      // as the debug info names it, lexically normal (no "..")
  int line = 0;
};

// addr2line's answer (-a -f -C -i) to frames, innermost first, inlined calls included.
std::vector<CodeFrame> parse_addr2line(const std::string& text);

// The failed check in a runner's output: libstdc++'s "file:line: function: Assertion
// 'cond' failed." as "a bounds check failed in function (cond)". Empty when none.
std::string failed_check(const std::string& output);

}  // namespace course
