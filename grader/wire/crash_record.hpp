// What a runner's crash handler writes on file descriptor 5 (kCrashFd) before it dies:
// one fixed-size record, in a single write (smaller than PIPE_BUF, so it arrives whole).
// Frames are addresses as offsets into the runner's executable file (the address minus
// the load bias), innermost first, so `addr2line -e runner` can name them; 0 marks a
// frame outside the executable (libc, libstdc++). The grader reads the record only after
// the runner died by a signal, and trusts nothing in it but what addr2line says of it.
#pragma once

#include <cstdint>

namespace course {

inline constexpr int kMaxCrashFrames = 48;

struct CrashRecord {
  char magic[4];     // "KVCR"
  uint32_t signal;
  uint32_t count;    // frames used, at most kMaxCrashFrames
  uint32_t flags;    // kCrashExactPc: frames[0] is the faulting instruction, not a return address
  uint64_t frames[kMaxCrashFrames];
};

inline constexpr uint32_t kCrashExactPc = 1;

}  // namespace course
