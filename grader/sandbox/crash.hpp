// Where a runner crashed, in the learner's terms: the crash record its handler wrote
// (wire/crash_record.hpp) symbolized with addr2line against the runner's executable (it
// carries debug info), keeping only the learner's frames, plus the text of a failed
// library check (_GLIBCXX_ASSERTIONS) found in what the runner printed.
#pragma once

#include <cstdint>
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

// Frames (wire/crash_record.hpp: offsets into the executable, innermost first, return
// addresses except the first when exact_first) as CrashSite::where says them: "in F
// (file:line), called from G (file:line)" for the first two frames of the code under
// test; "in F (no file or line: ...)" when the executable has no debug info for them;
// empty when no frame of the code under test is named.
std::string locate_frames(const std::string& executable, const std::vector<uint64_t>& frames,
                          bool exact_first);

// What a location says when the runner has no debug information.
inline constexpr const char* kNoDebugInfo =
    "no file or line: the runner was built without debug info; compile with -g, as the "
    "default RelWithDebInfo build does";

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
