// The file system a sandboxed process sees: a fresh, read-only tmpfs root holding only
// what is listed (the system's /usr and its /bin, /lib* links, the dynamic loader's
// cache, a few /dev nodes, optionally /proc), the folders and files bound in by name,
// and a small writable scratch tmpfs at /tmp. Nothing else of the machine is there: not
// the course, not the grader, not the results file (grader/SANDBOX.md, "File system").
//
// The plan is turned into a list of steps in the parent, before the child exists, so the
// child only makes system calls (no allocation) between clone() and exec().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace course::sandbox {

struct Bind {
  std::string source;  // absolute path outside
  std::string target;  // absolute path inside (often the same)
  bool writable = false;
  // A file copied in (read-only, mode 0555) rather than bound: for an executable the
  // sandbox's uid could not run in place (not readable and executable by others).
  bool copy = false;
};

struct RootPlan {
  std::vector<Bind> binds;              // folders or files, in this order
  std::vector<std::string> etc_files;   // below /etc, bound read-only when they exist
  bool proc = false;                    // a /proc of the sandbox's own PID namespace
  uint64_t scratch_bytes = 64u << 20;   // the writable tmpfs at /tmp (noexec)
  std::string workdir = "/tmp";         // the working folder inside
};

// One system call of the setup, with its arguments prepared.
struct RootStep {
  enum class Op {
    make_private, mount_tmpfs, mkdir, touch, bind, bind_readonly, copy, symlink, mount_proc,
    pivot_into, pivot_final, readonly_root, chdir
  };
  Op op;
  std::string a, b, data;  // paths / tmpfs options
  unsigned long flags = 0;
};

// The steps that build `plan`'s root (throws std::runtime_error for a bind whose source
// is missing). Runs in the parent.
std::vector<RootStep> plan_root(const RootPlan& plan);

// Runs the steps in a child that owns a new mount namespace (and the capabilities to
// mount in it). Returns nullptr on success, or the step that failed with errno set; the
// text is a string literal, safe to write from the child.
const char* enter_root(const std::vector<RootStep>& steps, const char** failed_path);

}  // namespace course::sandbox
