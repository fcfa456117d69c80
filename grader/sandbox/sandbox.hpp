// Starting a runner where it can do no harm (grader/SANDBOX.md). With the full isolation
// the runner is the second process of its own user, mount, PID, network and IPC
// namespaces: it sees a file system of /usr, its own executable and a scratch /tmp, runs
// as an unprivileged uid (the grader's own uid when the grader is not root), cannot
// reach the grader's processes or the network, and everything it starts dies with the
// first process of the namespace, which the grader kills or which exits when the runner
// does. Limits (address space, CPU seconds, file size, processes, no core) are set before
// exec in every mode but `off`.
//
// Where the kernel refuses namespaces the default degrades, with one warning line, to
// what needs none: the limits, no_new_privs, a parent-death signal, a separate uid when
// root, and the grader as child subreaper sweeping what the runner left behind.
// `strict` refuses to grade instead; `off` starts the runner as a plain child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace course::sandbox {

enum class Mode { automatic, strict, off };

// "auto", "strict", "off"; false for anything else.
bool parse_mode(const std::string& text, Mode& mode);

struct Limits {
  uint64_t address_space_bytes = uint64_t(4) << 30;  // skipped for AddressSanitizer runners
  uint64_t cpu_seconds = 120;
  uint64_t file_size_bytes = 32u << 20;
  uint64_t processes = 128;   // threads count
  uint64_t open_files = 256;
  uint64_t scratch_bytes = 64u << 20;  // the tmpfs at /tmp
};

// The limits for a per-case timeout: CPU seconds grow with it, the address space with the
// number of cores (threads); the rest are fixed.
Limits limits_for_timeout(double timeout_seconds);

// A file of the course the runner may read (the synthetic weights, grader/COST.md): bound
// read-only at `inside` in the namespaces' file system; elsewhere the runner reads
// `source` itself.
struct SharedFile {
  std::string source;  // absolute path outside
  std::string inside;  // absolute path in the sandbox's root
};

struct Config {
  Mode mode = Mode::automatic;
  Limits limits;
  std::vector<SharedFile> files;
};

// The isolation a runner gets on this machine with this mode.
struct Isolation {
  Mode mode = Mode::automatic;
  bool namespaces = false;    // user, mount, PID, network and IPC namespaces
  bool separate_uid = false;  // runs as an uid of its own (the grader is root)
  uint32_t uid = 0;           // that uid, outside
  bool limits = false;
  std::string missing;        // why the full isolation is not in force ("" when it is)

  bool full() const { return missing.empty() && mode != Mode::off; }
  // One line for the verdict: "sandbox: namespaces (user, mount, PID, network, IPC), uid
  // 64999, limits" or "sandbox: degraded (...)".
  std::string describe() const;
};

// Where a runner with isolation `iso` finds `file`.
std::string runner_path(const Isolation& iso, const SharedFile& file);

// Tries the full isolation once (a child that builds the sandbox and exits) and caches
// what it found. `strict` or not, the answer is the same; the caller decides.
Isolation probe(Mode mode);

// The uid runners run as when the grader is root: $KVCOURSE_RUNNER_UID, else 64999.
uint32_t runner_uid();

// A started runner, seen from the grader.
struct Spawned {
  pid_t pid = -1;          // the process to wait for and kill: the namespace's first
                           // process (namespaces), or the runner itself (otherwise)
  bool supervised = false; // pid is the supervisor: the runner's status comes on status_fd
  int request_fd = -1;     // our end of the runner's fd 3
  int response_fd = -1;   // ... fd 4
  int crash_fd = -1;       // ... fd 5
  int output_fd = -1;      // its stdout and stderr
  int status_fd = -1;      // supervised: the runner's wait status, 4 bytes, when it ends
};

// Starts `executable` with the isolation `iso` and `limits`. Throws std::runtime_error
// naming the step that failed.
Spawned spawn(const std::string& executable, const Isolation& iso, const Limits& limits,
              const std::vector<SharedFile>& files = {});

// Kills every live process below `root` but `keep`, whose own descendants die too, until
// none is left; with `reap`, waits for those that are the caller's children. Between
// cases it ends what the runner started during the case (root: the namespace's first
// process; without namespaces the grader itself, the runner's orphans' subreaper).
void kill_descendants(pid_t root, pid_t keep, bool reap);

// After a runner without namespaces ended: kills and reaps whatever it left (children
// re-parented to the grader, which is their subreaper). No-op with namespaces.
void sweep(const Isolation& iso);

// The runner's pid, as the grader sees it: the only child of the namespace's first
// process right after it started the runner. -1 when there is none.
pid_t runner_of(pid_t supervisor);

// Is `executable` built with AddressSanitizer (it reserves terabytes of address space,
// so RLIMIT_AS cannot apply)? Cached by path, size and modification time.
bool uses_address_sanitizer(const std::string& executable);

}  // namespace course::sandbox
