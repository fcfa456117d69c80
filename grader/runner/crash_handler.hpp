// The runner's crash handler: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT it writes the
// stack's return addresses (wire/crash_record.hpp) on file descriptor 5 and lets the
// signal kill the runner as before. The grader names the learner's frames from them
// ("was killed by signal 11 in KVCache::key (src/kvcache.cpp:31)"). It also records the
// stack of every throw, so that an exception the runner catches is located the same way
// ("threw std::out_of_range in KVCache::key (src/kvcache.cpp:40)").
#pragma once

#include <cstdint>
#include <vector>

namespace course {

// Installs the handler when file descriptor 5 is open; a no-op otherwise. In
// AddressSanitizer builds (whose own report says more of a crash) only throws are recorded.
void install_crash_handler();

// Inside a catch block: the stack where the exception being handled was thrown, as
// offsets into the executable (wire/crash_record.hpp's frames: return addresses,
// innermost first, 0 outside the executable). Empty when none was recorded: the handler
// is not installed, or the exception was thrown on another thread or made without a throw
// (std::make_exception_ptr).
std::vector<uint64_t> current_exception_stack();

// Whether throws are recorded at all (not when the runner was started without file
// descriptor 5, or the library's __cxa_throw was not found).
bool throws_recorded();

}  // namespace course
