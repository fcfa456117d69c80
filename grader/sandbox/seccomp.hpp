// The system calls a runner (or the learner's compiler) may not make, as a seccomp filter
// (grader/SANDBOX.md, "The system call filter"). The filter is built with libseccomp in
// the grader, before the child exists, and installed in the child with one prctl() right
// before exec, so that the child makes no allocation between fork and exec. It is
// inherited by everything the runner execs and cannot be removed.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

namespace course::sandbox {

enum class FilterKind {
  runner,  // no sockets, no tracing, no namespaces or mounts, no new process (threads only)
  runner_sanitizer,  // an AddressSanitizer runner: may also fork and trace itself (LeakSanitizer
                     // does)
  compiler,          // the learner's compile: may fork (the compiler driver runs cc1plus and as)
};

struct FilterProgram {
  std::vector<sock_filter> code;  // empty when it could not be built (see error)
  std::string error;
};

// The filter of `kind`, built once and cached. Not async-signal-safe: call in the parent.
const FilterProgram& filter_program(FilterKind kind);

// Installs `program` on the calling thread (no_new_privs must be set). Makes only the
// prctl() call: safe between fork and exec. False with errno set on failure.
bool install_filter(const FilterProgram& program);

// One line for the documents: what the filter of `kind` refuses.
std::string filter_summary(FilterKind kind);

}  // namespace course::sandbox
