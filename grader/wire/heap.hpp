// The heap of the grader and of the runner: memory freed is kept for the next case.
//
// Both processes allocate and free megabytes per case (answers of base64 tensors, the
// parsed documents, a stage's pools). glibc's defaults give a block of 128 KB or more its
// own mapping, unmapped when freed, and return the heap's free top to the kernel; the
// next case then faults every page in again, and on the project's virtual machines a
// page fault is costly (the kernel's share was about a quarter of stage paged-cache's CPU
// time).
// Keeping the pages makes a process's footprint its peak, which its limits already bound.
// Measured (grader/COST.md, "2026-12-06"): stage paged-cache 43,000 page faults to 27,000.
#pragma once

#include <malloc.h>

namespace course {

inline void keep_freed_memory() {
  // Blocks below 1 GB come from the heap; a free top of up to 1 GB stays mapped.
  constexpr int kLarge = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLarge);
  mallopt(M_TRIM_THRESHOLD, kLarge);
}

}  // namespace course
