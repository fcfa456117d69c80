// Starting a runner where it can do no harm (grader/SANDBOX.md). With the full isolation
// the runner is the second process of its own user, mount, PID, network and IPC
// namespaces: it sees a file system of /usr, its own executable and a scratch /tmp, runs
// as an unprivileged uid (the grader's own uid when the grader is not root), cannot
// reach the grader's processes or the network, and everything it starts dies with the
// first process of the namespace, which the grader kills or which exits when the runner
// does. Limits (address space, CPU seconds, file size, processes, no core) and a seccomp
// filter (seccomp.hpp: no sockets, no tracing, no namespaces, threads but no new process)
// are set before exec in every mode but `off`.
//
// Where the kernel refuses namespaces and the grader is root (containers), the uid mode:
// the runner runs as a uid of its own (uid.hpp) in a scratch folder of its own, the
// answers' files closed to that uid (exposure.hpp), with the same limits and filter.
// Where no second uid can be used either, the grade is not protected, and every document
// says so; `strict` refuses to grade then. `off` starts the runner as a plain child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace course::sandbox {

// automatic: namespaces, else the uid mode, else unprotected (said everywhere); strict:
// namespaces or the uid mode, else no grading; uid: the uid mode even where namespaces
// work (for tests, and operators who want it); off: a plain child.
enum class Mode { automatic, strict, uid, off };

// "auto", "strict", "uid", "off"; false for anything else.
bool parse_mode(const std::string& text, Mode& mode);

struct Limits {
  uint64_t address_space_bytes = uint64_t(4) << 30;  // skipped for AddressSanitizer runners
  uint64_t cpu_seconds = 120;
  uint64_t file_size_bytes = 32u << 20;
  uint64_t processes = 128;  // threads count
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
  // Which of the runners that grade at the same time this one is (0, 1, ...): in the uid
  // mode each has a uid of its own (Isolation::uids), so that ending one's processes
  // leaves the other's alone.
  int slot = 0;
};

// The isolation a runner gets on this machine with this mode.
struct Isolation {
  enum class Kind {
    namespaces,   // the full isolation
    uid,          // no namespaces; a uid of its own, the answers closed to it, the filter
    unprotected,  // neither: the runner can read the answers and the results
    off,          // --sandbox=off
  };
  Mode mode = Mode::automatic;
  Kind kind = Kind::off;
  bool namespaces = false;    // user, mount, PID, network and IPC namespaces
  bool separate_uid = false;  // runs as an uid of its own (the grader is root)
  uint32_t uid = 0;           // that uid, outside
  // The uid mode: one uid per runner that may run at once, uids[0] == uid (reserve_slots).
  std::vector<uint32_t> uids;
  bool limits = false;
  std::string missing;  // why the full isolation is not in force ("" when it is)

  bool full() const { return kind == Kind::namespaces; }
  // The uid runner `slot` runs as (outside): uids[slot] in the uid mode, else uid.
  uint32_t uid_of(int slot) const;
  // How many runners may run at once: in the uid mode one per uid reserved, else no bound.
  int slots() const;
  // The grade can be trusted: namespaces or the uid mode.
  bool protects() const { return kind == Kind::namespaces || kind == Kind::uid; }
  // "namespaces", "uid", "unprotected", "off": the mode named in the results documents.
  std::string name() const;
  // One line for the verdict: "sandbox: user, mount, PID, network and IPC namespaces; uid
  // 64999; ...", "sandbox: uid 64998, no namespaces (...)", "sandbox: degraded, the grade
  // is NOT protected: ...".
  std::string describe() const;
};

// Where a runner with isolation `iso` finds `file`.
std::string runner_path(const Isolation& iso, const SharedFile& file);

// Tries the full isolation once (a child that builds the sandbox and exits) and caches
// what it found. `strict` or not, the answer is the same; the caller decides.
Isolation probe(Mode mode);

// The uid runners run as when the grader is root: $KVCOURSE_RUNNER_UID, else 64999.
uint32_t runner_uid();

// Makes room for `wanted` runners at once with mode's isolation (probe's, which it
// updates): in the uid mode a uid more for each runner past the first, reserved as the
// first was (uid.hpp) and checked usable, as many as can be had; elsewhere nothing is
// needed. Returns how many runners may run at once, at most `wanted`, at least 1.
int reserve_slots(Mode mode, int wanted);

// A started runner, seen from the grader.
struct Spawned {
  pid_t pid = -1;           // the process to wait for and kill: the namespace's first
                            // process (namespaces), or the runner itself (otherwise)
  bool supervised = false;  // pid is the supervisor: the runner's status comes on status_fd
  int request_fd = -1;      // our end of the runner's fd 3
  int response_fd = -1;     // ... fd 4
  int crash_fd = -1;        // ... fd 5
  int output_fd = -1;       // its stdout and stderr
  int status_fd = -1;       // supervised: the runner's wait status, 4 bytes, when it ends
};

// Starts `executable` with the isolation `iso` and `limits`, as runner `slot` (Config::
// slot), and counts it among the live runners (forget_runner, kill_runners). Throws
// std::runtime_error naming the step that failed. Safe to call from several threads.
Spawned spawn(const std::string& executable, const Isolation& iso, const Limits& limits,
              const std::vector<SharedFile>& files = {}, int slot = 0);

// The runner spawn returned as `pid` is reaped: no longer one of the live runners.
void forget_runner(pid_t pid);

// Kills every live runner (SIGKILL; on Ctrl-C and at exit). Async-signal-safe.
void kill_runners();

// Kills every live process below `root` but `keep`, whose own descendants die too, until
// none is left; with `reap`, waits for those that are the caller's children. Between
// cases it ends what the runner started during the case (root: the namespace's first
// process; without namespaces, kill_strays).
void kill_descendants(pid_t root, pid_t keep, bool reap);

// Without namespaces, between cases: kills and reaps every process below the grader
// (children re-parented to it, its subreaper) but the live runners and the grader's own
// helpers (addr2line, in the grader's process group, which no runner can join: a runner
// has a session of its own). `own_runner` (0: none) is spared but its descendants are not.
// What a runner started dies so, and another runner grading at the same time is left
// alone.
void kill_strays(pid_t own_runner);

// After runner `slot` without namespaces ended: kills and reaps whatever it left (as
// kill_strays; in the uid mode every process of that slot's uid, and its files in /tmp,
// /var/tmp and /dev/shm). No-op with namespaces.
void sweep(const Isolation& iso, int slot);

// Why the sandbox killed runner `slot`, once, if it did (the uid mode's disk quota): ""
// else.
std::string take_kill_reason(int slot);

// Before the results are written: no process of a runner is left (the uid mode kills
// every process of each runner's uid and waits until there is none).
void end_runners(const Isolation& iso);

// The runner's pid, as the grader sees it: the only child of the namespace's first
// process right after it started the runner. -1 when there is none.
pid_t runner_of(pid_t supervisor);

// Is `executable` built with AddressSanitizer (it reserves terabytes of address space,
// so RLIMIT_AS cannot apply)? Cached by path, size and modification time.
bool uses_address_sanitizer(const std::string& executable);

}  // namespace course::sandbox
