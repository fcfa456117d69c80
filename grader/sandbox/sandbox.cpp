#include "sandbox/sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sandbox/root.hpp"
#include "sandbox/seccomp.hpp"
#include "sandbox/uid.hpp"
#include "wire/protocol.hpp"

extern char** environ;

namespace course::sandbox {

namespace {

constexpr uint32_t kInsideUid = 1000;  // the runner's uid inside its user namespace
constexpr int kErrFd = 6;              // the child's copy of the error pipe, up to exec

// ---------------------------------------------------------------------------------------
// What the child needs, prepared before it exists: after clone() it only makes system
// calls and reads this.

struct ChildPlan {
  std::string executable;        // as the child sees it
  std::vector<std::string> env;  // NAME=value
  std::vector<char*> envp;       // into env, null-terminated
  std::vector<RootStep> steps;   // namespaces: the file system to build
  std::string uid_map, gid_map;  // namespaces, grader not root: written by the child
  bool switch_uid = false;       // setresuid/setresgid to `uid` before exec
  uint32_t uid = 0;
  bool limits = false;
  Limits limit_values;
  bool address_limit = true;
  bool dry_run = false;                   // probe: build the sandbox, exec nothing
  const FilterProgram* filter = nullptr;  // installed right before exec
  std::string workdir;  // no namespaces: the runner's working folder ("/" if empty)
  pid_t parent = 0;     // no namespaces: the grader, which must still be there
};

struct Pipes {
  int req[2], resp[2], crash[2], out[2], err[2], status[2], sync[2];
};

void open_pipe(int p[2]) {
  if (::pipe2(p, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The live runners: each a namespace's first process (its pid) or, without namespaces, a
// runner in a process group of its own (-pid). Read lock-free by kill_runners (a signal
// handler); changed, and read by kill_strays, with g_runners_lock held, which is also held
// from a runner's fork until it is listed, so that no stray hunt sees it unlisted.
constexpr size_t kMaxRunners = 256;
std::atomic<pid_t> g_runners[kMaxRunners];
std::mutex g_runners_lock;

// With g_runners_lock held.
void list_runner(pid_t target) {
  for (std::atomic<pid_t>& slot : g_runners) {
    pid_t free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, target)) return;
  }
  ::kill(target, SIGKILL);
  throw std::runtime_error("more than " + std::to_string(kMaxRunners) + " runners at once");
}

// With g_runners_lock held.
bool is_listed_runner(pid_t pid) {
  for (const std::atomic<pid_t>& slot : g_runners) {
    const pid_t v = slot.load();
    if (v != 0 && (v == pid || v == -pid)) return true;
  }
  return false;
}

// Writes "what: path: reason" on the error pipe and ends the child.
[[noreturn]] void child_fail(int fd, const char* what, const char* path) {
  const int e = errno;
  char msg[512];
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n + 1 < sizeof msg) msg[n++] = *s++;
  };
  put(what);
  if (path && *path) {
    put(" ");
    put(path);
  }
  put(": ");
  put(std::strerror(e));
  (void)!::write(fd, msg, n);
  ::_exit(126);
}

// Closes every descriptor but those in `keep` (which must be sorted).
void close_all_except(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  int from = 0;
  for (int fd : keep) {
    if (fd > from) ::syscall(SYS_close_range, unsigned(from), unsigned(fd - 1), 0u);
    from = fd + 1;
  }
  ::syscall(SYS_close_range, unsigned(from), ~0u, 0u);
}

void set_limit(int resource, uint64_t value) {
  struct rlimit r;
  r.rlim_cur = r.rlim_max = rlim_t(value);
  ::setrlimit(resource, &r);
}

void apply_limits(const ChildPlan& plan) {
  const Limits& l = plan.limit_values;
  if (plan.address_limit) set_limit(RLIMIT_AS, l.address_space_bytes);
  set_limit(RLIMIT_CPU, l.cpu_seconds);
  set_limit(RLIMIT_FSIZE, l.file_size_bytes);
  set_limit(RLIMIT_NPROC, l.processes);
  set_limit(RLIMIT_NOFILE, l.open_files);
  set_limit(RLIMIT_CORE, 0);
}

// The runner's side: its descriptors 0-5, limits, uid, no new privileges, exec.
[[noreturn]] void exec_runner(const ChildPlan& plan, const Pipes& p) {
  // Above 10 first, so that the dup2 calls below cannot overwrite one another.
  const int req = ::fcntl(p.req[0], F_DUPFD, 10), resp = ::fcntl(p.resp[1], F_DUPFD, 10);
  const int crash = ::fcntl(p.crash[1], F_DUPFD, 10), out = ::fcntl(p.out[1], F_DUPFD, 10);
  const int err = ::fcntl(p.err[1], F_DUPFD_CLOEXEC, 10);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (req < 0 || resp < 0 || crash < 0 || out < 0 || err < 0 || devnull < 0)
    child_fail(p.err[1], "preparing descriptors", "");
  ::dup2(devnull, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  ::dup2(req, kRequestFd);
  ::dup2(resp, kResponseFd);
  ::dup2(crash, kCrashFd);
  ::dup3(err, kErrFd, O_CLOEXEC);
  ::syscall(SYS_close_range, unsigned(kErrFd + 1), ~0u, 0u);
  ::setsid();  // a plain child (start_child) has its own already
  if (plan.limits) apply_limits(plan);
  if (plan.switch_uid) {
    // The system calls themselves, not glibc's wrappers: those apply the change to every
    // thread glibc knows of, and a child of a raw clone() inherits the parent's list of
    // threads without the threads. With another thread of the parent being created at the
    // moment of the clone (make-fixtures runs mistakes on several threads), the wrapper
    // waits for that thread forever. The child has one thread, the one that calls.
    // setgroups is refused (and not needed) in a namespace the grader mapped unprivileged.
    ::syscall(SYS_setgroups, 0, nullptr);
    if (::syscall(SYS_setresgid, plan.uid, plan.uid, plan.uid) != 0 ||
        ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0)
      child_fail(kErrFd, "switching to uid", "");
  }
  if (plan.limits && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    child_fail(kErrFd, "setting no_new_privs", "");
  // After the uid switch, which clears it; then the grader must still be the parent.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (plan.parent > 0 && ::getppid() != plan.parent) ::_exit(1);
  if (plan.filter && !install_filter(*plan.filter))
    child_fail(kErrFd, "installing the seccomp filter", "");
  char* argv[] = {const_cast<char*>(plan.executable.c_str()), nullptr};
  ::execve(argv[0], argv, const_cast<char**>(plan.envp.data()));
  child_fail(kErrFd, "cannot start", plan.executable.c_str());
}

bool write_text(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  return ok;
}

// The first process of the namespaces: builds the file system, starts the runner, waits
// for it, reports its status and exits, and the kernel kills whatever else is left in
// the PID namespace.
[[noreturn]] void supervise(const ChildPlan& plan, Pipes p) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_DUMPABLE, 0);  // a copy of the grader's memory: nobody may read it
  close_all_except({p.sync[0], p.err[1], p.status[1], p.req[0], p.resp[1], p.crash[1], p.out[1]});
  char go = 0;
  if (::read(p.sync[0], &go, 1) != 1) ::_exit(1);  // the grader is gone
  ::close(p.sync[0]);
  if (!plan.uid_map.empty()) {
    if (!write_text("/proc/self/setgroups", "deny"))
      child_fail(p.err[1], "writing", "/proc/self/setgroups");
    if (!write_text("/proc/self/uid_map", plan.uid_map))
      child_fail(p.err[1], "writing", "/proc/self/uid_map");
    if (!write_text("/proc/self/gid_map", plan.gid_map))
      child_fail(p.err[1], "writing", "/proc/self/gid_map");
  }
  const char* path = "";
  if (const char* step = enter_root(plan.steps, &path)) child_fail(p.err[1], step, path);
  ::sethostname("sandbox", 7);
  if (plan.dry_run) ::_exit(0);
  const pid_t runner = pid_t(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (runner < 0) child_fail(p.err[1], "starting the runner", "");
  if (runner == 0) exec_runner(plan, p);
  for (int fd : {p.req[0], p.resp[1], p.crash[1], p.out[1], p.err[1]}) ::close(fd);
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, 0);
    if (done == runner) {
      (void)!::write(p.status[1], &status, sizeof status);
      ::_exit(0);
    }
    if (done < 0 && errno != EINTR) ::_exit(0);
  }
}

// ---------------------------------------------------------------------------------------
// The parent's side.

// The uid mode's folders: one per grader, made with a random name in /tmp, owned by the
// grader, mode 0711 (the runner's uid may pass through it, not list or write it). In it
// the runner executables, copied (root's, 0555: the originals sit in build/bin/, which
// is closed to the runner's uid), and `work/` (`work-1/`, ... for the runners beside the
// first), the runner's scratch and working folder, the runner's uid's own (0700), made
// afresh for every runner.
struct UidSlot {
  std::string work;  // the slot's current runner's working folder
  uint32_t uid = 0;
  uint64_t quota = 0;
  std::string kill_reason;
};

struct UidFolders {
  std::mutex lock;  // over everything here
  std::string base;
  std::map<std::string, std::string> copies;  // executable -> its copy
  std::map<int, UidSlot> slots;               // by Config::slot
  bool watching = false;
};

UidFolders& uid_folders() {
  static UidFolders* folders = new UidFolders;  // never destroyed: the watch thread reads it
  return *folders;
}

void remove_uid_base() {
  UidFolders& f = uid_folders();
  std::error_code ec;
  if (!f.base.empty()) std::filesystem::remove_all(f.base, ec);
}

// With uid_folders().lock held.
std::string uid_base() {
  UidFolders& f = uid_folders();
  if (!f.base.empty()) return f.base;
  char name[] = "/tmp/kvcourse-runner-XXXXXX";
  if (!::mkdtemp(name))
    throw std::runtime_error(std::string("cannot make the runner's folder in /tmp: ") +
                             std::strerror(errno));
  ::chmod(name, 0711);
  f.base = name;
  std::atexit(remove_uid_base);
  return f.base;
}

std::string runner_copy(const std::string& executable) {
  UidFolders& f = uid_folders();
  std::lock_guard<std::mutex> hold(f.lock);
  struct stat st;
  if (::stat(executable.c_str(), &st) != 0)
    throw std::runtime_error("cannot read " + executable + ": " + std::strerror(errno));
  const std::string key = executable + "@" + std::to_string(st.st_size) + "@" +
                          std::to_string(st.st_mtim.tv_sec) + "." +
                          std::to_string(st.st_mtim.tv_nsec);
  if (auto it = f.copies.find(key); it != f.copies.end()) return it->second;
  const std::string copy = uid_base() + "/runner-" + std::to_string(f.copies.size());
  std::error_code ec;
  std::filesystem::copy_file(executable, copy, std::filesystem::copy_options::overwrite_existing,
                             ec);
  if (ec || ::chmod(copy.c_str(), 0555) != 0)
    throw std::runtime_error("cannot copy the runner to " + copy + ": " +
                             (ec ? ec.message() : std::strerror(errno)));
  return f.copies[key] = copy;
}

// The bytes each runner's uid holds on disk: its working folder and what it owns at the
// top of /tmp, /var/tmp and /dev/shm. Past the quota, every process of that uid is killed.
void watch_disk() {
  UidFolders& f = uid_folders();
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::map<int, UidSlot> slots;
    {
      std::lock_guard<std::mutex> hold(f.lock);
      slots = f.slots;
    }
    for (const auto& [slot, s] : slots) {
      if (s.work.empty()) continue;
      uint64_t bytes = remove_uid_files(s.uid, false);
      std::error_code ec;
      for (std::filesystem::recursive_directory_iterator it(s.work, ec), end; !ec && it != end;
           it.increment(ec)) {
        struct stat st;
        if (::lstat(it->path().c_str(), &st) == 0) bytes += uint64_t(st.st_blocks) * 512;
      }
      if (bytes <= s.quota) continue;
      {
        std::lock_guard<std::mutex> hold(f.lock);
        f.slots[slot].kill_reason = "the sandbox killed it: its files took " +
                                    std::to_string(bytes >> 20) + " MiB, more than the " +
                                    std::to_string(s.quota >> 20) +
                                    " MiB its scratch space may hold";
      }
      kill_uid(s.uid, false);
    }
  }
}

std::string fresh_workdir(int slot, uint32_t uid, uint64_t quota) {
  UidFolders& f = uid_folders();
  std::string work;
  {
    std::lock_guard<std::mutex> hold(f.lock);
    work = uid_base() + (slot == 0 ? "/work" : "/work-" + std::to_string(slot));
    f.slots[slot].work.clear();  // not watched while it is made again
  }
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  if (::mkdir(work.c_str(), 0700) != 0 || ::chown(work.c_str(), uid, uid) != 0)
    throw std::runtime_error("cannot make the runner's working folder " + work + ": " +
                             std::strerror(errno));
  std::lock_guard<std::mutex> hold(f.lock);
  UidSlot& s = f.slots[slot];
  s.work = work, s.uid = uid, s.quota = quota;
  if (!f.watching) {
    std::thread(watch_disk).detach();
    f.watching = true;
  }
  return work;
}

std::vector<std::string> runner_environment(Mode mode) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string var = *e;
    const bool keep = mode == Mode::off || var.rfind("KVCOURSE_", 0) == 0 ||
                      var.rfind("ASAN_OPTIONS=", 0) == 0 || var.rfind("UBSAN_OPTIONS=", 0) == 0 ||
                      var.rfind("LSAN_OPTIONS=", 0) == 0;
    if (keep) env.push_back(var);
  }
  if (mode != Mode::off) {
    for (const char* var : {"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"})
      env.push_back(var);
  }
  return env;
}

ChildPlan make_plan(const std::string& executable, const Isolation& iso, const Limits& limits,
                    const std::vector<SharedFile>& files = {}, int slot = 0) {
  ChildPlan plan;
  plan.env = runner_environment(iso.mode);
  plan.limits = iso.mode != Mode::off;
  plan.limit_values = limits;
  const bool sanitizer = !executable.empty() && uses_address_sanitizer(executable);
  plan.address_limit = !executable.empty() && !sanitizer;
  plan.executable = executable;
  if (plan.limits) {
    const FilterProgram& filter =
        filter_program(sanitizer ? FilterKind::runner_sanitizer : FilterKind::runner);
    if (!filter.error.empty())
      throw std::runtime_error("cannot build the seccomp filter: " + filter.error);
    plan.filter = &filter;
  }
  if (iso.kind == Isolation::Kind::uid && !executable.empty()) {
    plan.executable = runner_copy(executable);
    plan.workdir = fresh_workdir(slot, iso.uid_of(slot), limits.scratch_bytes);
    for (std::string& var : plan.env)
      if (var == "HOME=/tmp" || var == "TMPDIR=/tmp")
        var = var.substr(0, var.find('=') + 1) + plan.workdir;
  }
  for (std::string& var : plan.env) plan.envp.push_back(var.data());
  plan.envp.push_back(nullptr);
  if (iso.namespaces) {
    RootPlan root;
    root.etc_files = {"ld.so.cache"};
    root.proc = true;
    root.scratch_bytes = limits.scratch_bytes;
    if (!executable.empty()) {
      // The runner's uid may run the file where it is only if others may read and run it
      // (a umask of 077 makes builds that the root grader can run and nobody else).
      struct stat st;
      const bool others_can_run =
          ::stat(executable.c_str(), &st) == 0 && (st.st_mode & S_IROTH) && (st.st_mode & S_IXOTH);
      root.binds.push_back({executable, "/runner", false, !others_can_run});
    }
    // The course's files the runner reads (the weights), read-only.
    for (const SharedFile& f : files) root.binds.push_back({f.source, f.inside, false, false});
    plan.steps = plan_root(root);
    plan.executable = "/runner";
    plan.switch_uid = true;
    plan.uid = kInsideUid;
    if (::geteuid() != 0) {
      plan.uid_map = std::to_string(kInsideUid) + " " + std::to_string(::geteuid()) + " 1";
      plan.gid_map = std::to_string(kInsideUid) + " " + std::to_string(::getegid()) + " 1";
    }
  } else if (iso.separate_uid) {
    plan.switch_uid = true;
    plan.uid = iso.uid_of(slot);
  }
  return plan;
}

// Reads the child's error pipe to its end: empty once exec (or the probe) succeeded.
std::string read_child_error(int fd) {
  std::string text;
  char buf[512];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  return text;
}

void close_pipes(Pipes& p) {
  for (int* pipe : {p.req, p.resp, p.crash, p.out, p.err, p.status, p.sync}) {
    close_fd(pipe[0]);
    close_fd(pipe[1]);
  }
}

Pipes open_pipes() {
  Pipes p;
  for (int* pipe : {p.req, p.resp, p.crash, p.out, p.err, p.status, p.sync}) pipe[0] = pipe[1] = -1;
  try {
    for (int* pipe : {p.req, p.resp, p.crash, p.out, p.err, p.status, p.sync}) open_pipe(pipe);
  } catch (...) {
    close_pipes(p);
    throw;
  }
  return p;
}

// As root, the grader writes the child's maps: its own uid 0 (the supervisor must own
// the files it creates) and the runner's uid, `uid` outside.
bool write_root_maps(pid_t child, uint32_t uid) {
  const std::string maps =
      "0 0 1\n" + std::to_string(kInsideUid) + " " + std::to_string(uid) + " 1\n";
  const std::string proc = "/proc/" + std::to_string(child);
  return write_text((proc + "/uid_map").c_str(), maps) &&
         write_text((proc + "/gid_map").c_str(), maps);
}

constexpr int kNamespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

// Starts the supervisor in new namespaces; returns its pid, or throws with the cause.
pid_t start_supervisor(const ChildPlan& plan, const Isolation& iso, Pipes& p) {
  const pid_t pid = pid_t(::syscall(SYS_clone, kNamespaces | SIGCHLD, 0, 0, 0, 0));
  if (pid < 0)
    throw std::runtime_error(std::string("cannot create namespaces: ") + std::strerror(errno));
  if (pid == 0) supervise(plan, p);
  for (int* end :
       {&p.req[0], &p.resp[1], &p.crash[1], &p.out[1], &p.err[1], &p.status[1], &p.sync[0]})
    close_fd(*end);
  bool mapped = ::geteuid() != 0 || write_root_maps(pid, iso.uid);
  const int map_errno = errno;
  if (mapped) (void)!::write(p.sync[1], "g", 1);
  close_fd(p.sync[1]);
  std::string error = read_child_error(p.err[0]);
  close_fd(p.err[0]);
  if (!mapped)
    error = std::string("writing the user namespace's maps: ") + std::strerror(map_errno);
  if (!error.empty() || plan.dry_run) {
    if (!error.empty()) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      error = "the sandbox's first process failed";
    if (!error.empty()) throw std::runtime_error(error);
  }
  return pid;
}

// Starts the runner as a plain child (no namespaces): its own session (and so its own
// process group, whose id is its pid), killed with the grader. The session first: a
// process group leader could not start one, and in the grader's session the runner
// could move itself into another of the session's groups (setpgid), the grader's own.
pid_t start_child(ChildPlan& plan, Pipes& p) {
  const pid_t grader = ::getpid();
  plan.parent = grader;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != grader) ::_exit(1);
    const char* workdir = plan.workdir.empty() ? "/" : plan.workdir.c_str();
    if (plan.limits && ::chdir(workdir) != 0) child_fail(p.err[1], "entering", workdir);
    exec_runner(plan, p);
  }
  for (int* end : {&p.req[0], &p.resp[1], &p.crash[1], &p.out[1], &p.err[1], &p.status[1],
                   &p.sync[0], &p.sync[1]})
    close_fd(*end);
  std::string error = read_child_error(p.err[0]);
  close_fd(p.err[0]);
  if (!error.empty()) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error(error);
  }
  return pid;
}

}  // namespace

bool parse_mode(const std::string& text, Mode& mode) {
  if (text == "auto")
    mode = Mode::automatic;
  else if (text == "strict")
    mode = Mode::strict;
  else if (text == "uid")
    mode = Mode::uid;
  else if (text == "off")
    mode = Mode::off;
  else
    return false;
  return true;
}

Limits limits_for_timeout(double timeout_seconds) {
  Limits l;
  // The decode stages' weights take about 0.5 GB and the runner peaks near 0.65 GB of
  // address space on 2 cores; every thread of the model's pool adds a stack and a malloc
  // arena (8 + 64 MB reserved, not used).
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  l.address_space_bytes = (uint64_t(3) << 30) + uint64_t(cores) * (uint64_t(128) << 20);
  // A runner serves a whole stage, one case after another; the wall-clock timeout of each
  // case is what stops a spin. This is the backstop: generous, but finite.
  l.cpu_seconds = uint64_t(60 + 20 * std::ceil(timeout_seconds));
  return l;
}

uint32_t runner_uid() {
  if (const char* env = std::getenv("KVCOURSE_RUNNER_UID"); env && *env) {
    char* end = nullptr;
    unsigned long v = std::strtoul(env, &end, 10);
    if (end && *end == '\0' && v > 0 && v < 0xffffffffu) return uint32_t(v);
  }
  return 64999;
}

uint32_t Isolation::uid_of(int slot) const {
  return kind == Kind::uid && slot >= 0 && size_t(slot) < uids.size() ? uids[size_t(slot)] : uid;
}

int Isolation::slots() const {
  return kind == Kind::uid ? std::max(1, int(uids.size())) : std::numeric_limits<int>::max();
}

std::string Isolation::name() const {
  switch (kind) {
    case Kind::namespaces:
      return "namespaces";
    case Kind::uid:
      return "uid";
    case Kind::unprotected:
      return "unprotected";
    case Kind::off:
      break;
  }
  return "off";
}

std::string Isolation::describe() const {
  const std::string limits_text = "; limits on memory, CPU, file size and processes";
  switch (kind) {
    case Kind::off:
      return "sandbox: off (--sandbox=off): the runner runs with the grader's rights and no limits";
    case Kind::namespaces:
      return "sandbox: user, mount, PID, network and IPC namespaces; uid " + std::to_string(uid) +
             "; a system call filter" + limits_text;
    case Kind::uid: {
      std::string others;
      for (size_t i = 1; i < uids.size(); ++i)
        others += (i > 1 ? ", " : "") + std::to_string(uids[i]);
      if (!others.empty()) others = " (" + others + " for the runners beside it, one uid each)";
      return "sandbox: uid " + std::to_string(uid) + " of its own" + others + ", no namespaces (" +
             missing +
             "): the answers closed to that uid, a scratch folder of its own, a system call filter "
             "(" +
             filter_summary(FilterKind::runner) + ")" + limits_text;
    }
    case Kind::unprotected:
      break;
  }
  return "sandbox: degraded, the grade is NOT protected: the runner runs as " +
         (uid == 0 ? std::string("root") : "the grader's own uid " + std::to_string(uid)) +
         " and can read the answers and rewrite the results (" + missing +
         "); a system call filter" + limits_text;
}

namespace {

std::mutex g_probe_lock;  // over probe's cache
std::map<Mode, Isolation> g_probed;

Isolation probe_locked(Mode mode) {
  std::map<Mode, Isolation>& cache = g_probed;
  if (auto it = cache.find(mode); it != cache.end()) return it->second;
  Isolation iso;
  iso.mode = mode;
  if (mode == Mode::off) {
    iso.kind = Isolation::Kind::off;
    iso.missing = "--sandbox=off";
    return cache[mode] = iso;
  }
  iso.limits = true;
  const bool root = ::geteuid() == 0;
  if (mode != Mode::uid) {
    iso.separate_uid = root;
    iso.uid = root ? runner_uid() : uint32_t(::geteuid());
    iso.namespaces = true;
    iso.kind = Isolation::Kind::namespaces;
    try {
      ChildPlan plan = make_plan("", iso, Limits{});
      plan.dry_run = true;
      Pipes p = open_pipes();
      try {
        start_supervisor(plan, iso, p);
      } catch (...) {
        close_pipes(p);
        throw;
      }
      close_pipes(p);
      return cache[mode] = iso;
    } catch (const std::exception& e) {
      iso.namespaces = false;
      iso.missing = std::string("namespaces unavailable: ") + e.what();
    }
  } else {
    iso.missing = "--sandbox=uid";
  }
  iso.kind = Isolation::Kind::unprotected;
  iso.separate_uid = false;
  iso.uid = uint32_t(::geteuid());
  const FilterProgram& filter = filter_program(FilterKind::runner);
  if (!filter.error.empty()) {
    iso.missing += "; no system call filter: " + filter.error;
  } else if (!root) {
    iso.missing += "; the grader is not root, so the runner cannot have a uid of its own";
  } else {
    std::string error;
    const uint32_t uid = reserve_runner_uid(error);
    if (uid == 0) {
      iso.missing += "; " + error;
    } else if (!uid_usable(uid)) {
      iso.missing +=
          "; uid " + std::to_string(uid) + " is not usable (a user namespace that maps only root?)";
    } else {
      iso.kind = Isolation::Kind::uid;
      iso.separate_uid = true;
      iso.uid = uid;
      iso.uids = {uid};
    }
  }
  return cache[mode] = iso;
}

}  // namespace

Isolation probe(Mode mode) {
  std::lock_guard<std::mutex> hold(g_probe_lock);
  return probe_locked(mode);
}

int reserve_slots(Mode mode, int wanted) {
  wanted = std::max(1, wanted);
  std::lock_guard<std::mutex> hold(g_probe_lock);
  probe_locked(mode);
  Isolation& iso = g_probed[mode];
  if (iso.kind != Isolation::Kind::uid) return wanted;
  while (int(iso.uids.size()) < wanted) {
    std::string error;
    const uint32_t uid = reserve_another_runner_uid(error);
    if (uid == 0 || !uid_usable(uid)) break;
    iso.uids.push_back(uid);
  }
  return std::min(wanted, int(iso.uids.size()));
}

std::string runner_path(const Isolation& iso, const SharedFile& file) {
  return iso.namespaces ? file.inside : file.source;
}

Spawned spawn(const std::string& executable, const Isolation& iso, const Limits& limits,
              const std::vector<SharedFile>& files, int slot) {
  if ((iso.mode == Mode::strict || iso.mode == Mode::uid) && !iso.protects())
    throw std::runtime_error("--sandbox=" + std::string(iso.mode == Mode::uid ? "uid" : "strict") +
                             ": the runner cannot be isolated here (" + iso.missing + ")");
  if (iso.kind == Isolation::Kind::uid && slot >= iso.slots())
    throw std::runtime_error("runner " + std::to_string(slot + 1) +
                             " at once has no uid of its own (" + std::to_string(iso.slots()) +
                             " reserved)");
  if (!iso.namespaces && iso.mode != Mode::off) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // What the learner's compile or an earlier runner left running as the uid goes first.
  if (iso.kind == Isolation::Kind::uid) kill_uid(iso.uid_of(slot));
  ChildPlan plan = make_plan(executable, iso, limits, files, slot);
  Pipes p = open_pipes();
  Spawned s;
  try {
    if (iso.namespaces) {
      s.pid = start_supervisor(plan, iso, p);
      std::lock_guard<std::mutex> hold(g_runners_lock);
      list_runner(s.pid);
    } else {
      std::lock_guard<std::mutex> hold(g_runners_lock);
      s.pid = start_child(plan, p);
      list_runner(-s.pid);
    }
  } catch (...) {
    close_pipes(p);
    throw;
  }
  s.supervised = iso.namespaces;
  s.request_fd = p.req[1];
  s.response_fd = p.resp[0];
  s.crash_fd = p.crash[0];
  s.output_fd = p.out[0];
  s.status_fd = p.status[0];
  if (!s.supervised) close_fd(s.status_fd);
  return s;
}

namespace {

// A child of a process as /proc/CHILD/stat shows it: "pid (name) S ppid pgrp ...".
struct Child {
  pid_t pid = 0;
  bool zombie = false;
  long group = 0;  // its process group
};

// The children of every thread of the process at `proc_dir` ("/proc/PID": its
// task/TID/children), zombies included.
std::vector<Child> children_of(const std::string& proc_dir) {
  std::vector<Child> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(proc_dir + "/task", ec)) {
    std::ifstream list(task.path() / "children");
    for (pid_t child; list >> child;) {
      std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t end = line.rfind(')');
      if (end == std::string::npos || end + 2 >= line.size()) continue;
      Child c;
      c.pid = child;
      c.zombie = line[end + 2] == 'Z';
      long ppid = 0;
      std::istringstream rest(line.substr(end + 3));
      rest >> ppid >> c.group;
      out.push_back(c);
    }
  }
  return out;
}

// The children of every thread of `pid`, zombies left out.
std::vector<pid_t> live_children(pid_t pid) {
  std::vector<pid_t> out;
  for (const Child& c : children_of("/proc/" + std::to_string(pid)))
    if (!c.zombie) out.push_back(c.pid);
  return out;
}

}  // namespace

void kill_descendants(pid_t root, pid_t keep, bool reap) {
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> doomed, todo = live_children(root);
    while (!todo.empty()) {
      const pid_t pid = todo.back();
      todo.pop_back();
      if (pid != keep) doomed.push_back(pid);
      for (pid_t child : live_children(pid)) todo.push_back(child);
    }
    if (doomed.empty()) return;
    for (pid_t pid : doomed) ::kill(pid, SIGKILL);
    if (reap)
      for (pid_t pid : doomed)
        ::waitpid(pid, nullptr, 0);  // only the caller's children are waited for
  }
}

void forget_runner(pid_t pid) {
  if (pid <= 0) return;
  std::lock_guard<std::mutex> hold(g_runners_lock);
  for (std::atomic<pid_t>& slot : g_runners) {
    pid_t v = slot.load();
    if (v == pid || v == -pid) slot.compare_exchange_strong(v, 0);
  }
}

void kill_runners() {
  for (const std::atomic<pid_t>& slot : g_runners)
    if (const pid_t target = slot.load(); target != 0) ::kill(target, SIGKILL);
}

void kill_strays(pid_t own_runner) {
  std::lock_guard<std::mutex> hold(g_runners_lock);
  const pid_t own_group = ::getpgrp();
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> doomed, todo;
    for (const Child& c : children_of("/proc/self")) {
      if (c.zombie || c.group == own_group) continue;  // the grader's helpers
      if (c.pid == own_runner)
        for (pid_t child : live_children(c.pid)) todo.push_back(child);
      else if (!is_listed_runner(c.pid))
        todo.push_back(c.pid);
    }
    while (!todo.empty()) {
      const pid_t pid = todo.back();
      todo.pop_back();
      doomed.push_back(pid);
      for (pid_t child : live_children(pid)) todo.push_back(child);
    }
    if (doomed.empty()) break;
    for (pid_t pid : doomed) ::kill(pid, SIGKILL);
    for (pid_t pid : doomed) ::waitpid(pid, nullptr, 0);  // only the grader's children
  }
  // What died re-parented to the grader, its subreaper; a runner's own zombie is its
  // RunnerProcess's to reap (it reads the wait status).
  for (const Child& c : children_of("/proc/self"))
    if (c.zombie && c.group != own_group && !is_listed_runner(c.pid))
      ::waitpid(c.pid, nullptr, WNOHANG);
}

void sweep(const Isolation& iso, int slot) {
  if (iso.namespaces || iso.mode == Mode::off) return;
  kill_strays(0);
  if (iso.kind == Isolation::Kind::uid) {
    kill_uid(iso.uid_of(slot));
    remove_uid_files(iso.uid_of(slot), true);
  }
  kill_strays(0);  // what kill_uid killed, re-parented to the grader
}

std::string take_kill_reason(int slot) {
  UidFolders& f = uid_folders();
  std::lock_guard<std::mutex> hold(f.lock);
  std::string reason;
  if (auto it = f.slots.find(slot); it != f.slots.end()) reason.swap(it->second.kill_reason);
  return reason;
}

void end_runners(const Isolation& iso) {
  for (int slot = 0; slot < std::max<int>(1, int(iso.uids.size())); ++slot) sweep(iso, slot);
}

pid_t runner_of(pid_t supervisor) {
  const std::vector<pid_t> children = live_children(supervisor);
  return children.size() == 1 ? children[0] : -1;
}

bool uses_address_sanitizer(const std::string& executable) {
  struct stat st;
  if (::stat(executable.c_str(), &st) != 0) return false;
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  static std::map<std::string, std::pair<std::pair<off_t, long>, bool>> cache;
  const auto key =
      std::make_pair(st.st_size, long(st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec));
  if (auto it = cache.find(executable); it != cache.end() && it->second.first == key)
    return it->second.second;
  std::ifstream in(executable, std::ios::binary);
  const std::string needle = "__asan_init";
  std::string window;
  bool found = false;
  char buf[1 << 16];
  while (!found && in.read(buf, sizeof buf).gcount() > 0) {
    window.append(buf, size_t(in.gcount()));
    found = window.find(needle) != std::string::npos;
    window.erase(0, window.size() > needle.size() ? window.size() - needle.size() : 0);
  }
  cache[executable] = {key, found};
  return found;
}

}  // namespace course::sandbox
