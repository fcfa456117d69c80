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
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sandbox/root.hpp"
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
  std::string executable;            // as the child sees it
  std::vector<std::string> env;      // NAME=value
  std::vector<char*> envp;           // into env, null-terminated
  std::vector<RootStep> steps;       // namespaces: the file system to build
  std::string uid_map, gid_map;      // namespaces, grader not root: written by the child
  bool switch_uid = false;           // setresuid/setresgid to `uid` before exec
  uint32_t uid = 0;
  bool limits = false;
  Limits limit_values;
  bool address_limit = true;
  bool dry_run = false;              // probe: build the sandbox, exec nothing
};

struct Pipes {
  int req[2], resp[2], crash[2], out[2], err[2], status[2], sync[2];
};

void open_pipe(int p[2]) {
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
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
  if (req < 0 || resp < 0 || crash < 0 || out < 0 || err < 0 || devnull < 0) child_fail(p.err[1], "preparing descriptors", "");
  ::dup2(devnull, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  ::dup2(req, kRequestFd);
  ::dup2(resp, kResponseFd);
  ::dup2(crash, kCrashFd);
  ::dup3(err, kErrFd, O_CLOEXEC);
  ::syscall(SYS_close_range, unsigned(kErrFd + 1), ~0u, 0u);
  ::setsid();
  if (plan.limits) apply_limits(plan);
  if (plan.switch_uid) {
    ::setgroups(0, nullptr);  // refused (and not needed) in a namespace the grader mapped unprivileged
    if (::setresgid(plan.uid, plan.uid, plan.uid) != 0 || ::setresuid(plan.uid, plan.uid, plan.uid) != 0)
      child_fail(kErrFd, "switching to uid", "");
  }
  if (plan.limits && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(kErrFd, "setting no_new_privs", "");
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
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
    if (!write_text("/proc/self/setgroups", "deny")) child_fail(p.err[1], "writing", "/proc/self/setgroups");
    if (!write_text("/proc/self/uid_map", plan.uid_map)) child_fail(p.err[1], "writing", "/proc/self/uid_map");
    if (!write_text("/proc/self/gid_map", plan.gid_map)) child_fail(p.err[1], "writing", "/proc/self/gid_map");
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

std::vector<std::string> runner_environment(Mode mode) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string var = *e;
    const bool keep = mode == Mode::off || var.rfind("KVCOURSE_", 0) == 0 || var.rfind("ASAN_OPTIONS=", 0) == 0 ||
                      var.rfind("UBSAN_OPTIONS=", 0) == 0 || var.rfind("LSAN_OPTIONS=", 0) == 0;
    if (keep) env.push_back(var);
  }
  if (mode != Mode::off) {
    for (const char* var : {"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"}) env.push_back(var);
  }
  return env;
}

ChildPlan make_plan(const std::string& executable, const Isolation& iso, const Limits& limits,
                    const std::vector<SharedFile>& files = {}) {
  ChildPlan plan;
  plan.env = runner_environment(iso.mode);
  for (std::string& var : plan.env) plan.envp.push_back(var.data());
  plan.envp.push_back(nullptr);
  plan.limits = iso.mode != Mode::off;
  plan.limit_values = limits;
  plan.address_limit = !executable.empty() && !uses_address_sanitizer(executable);
  plan.executable = executable;
  if (iso.namespaces) {
    RootPlan root;
    root.etc_files = {"ld.so.cache"};
    root.proc = true;
    root.scratch_bytes = limits.scratch_bytes;
    if (!executable.empty()) {
      // The runner's uid may run the file where it is only if others may read and run it
      // (a umask of 077 makes builds that the root grader can run and nobody else).
      struct stat st;
      const bool others_can_run = ::stat(executable.c_str(), &st) == 0 && (st.st_mode & S_IROTH) && (st.st_mode & S_IXOTH);
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
    plan.uid = iso.uid;
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
  const std::string maps = "0 0 1\n" + std::to_string(kInsideUid) + " " + std::to_string(uid) + " 1\n";
  const std::string proc = "/proc/" + std::to_string(child);
  return write_text((proc + "/uid_map").c_str(), maps) && write_text((proc + "/gid_map").c_str(), maps);
}

constexpr int kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

// Starts the supervisor in new namespaces; returns its pid, or throws with the cause.
pid_t start_supervisor(const ChildPlan& plan, const Isolation& iso, Pipes& p) {
  const pid_t pid = pid_t(::syscall(SYS_clone, kNamespaces | SIGCHLD, 0, 0, 0, 0));
  if (pid < 0) throw std::runtime_error(std::string("cannot create namespaces: ") + std::strerror(errno));
  if (pid == 0) supervise(plan, p);
  for (int* end : {&p.req[0], &p.resp[1], &p.crash[1], &p.out[1], &p.err[1], &p.status[1], &p.sync[0]}) close_fd(*end);
  bool mapped = ::geteuid() != 0 || write_root_maps(pid, iso.uid);
  const int map_errno = errno;
  if (mapped) (void)!::write(p.sync[1], "g", 1);
  close_fd(p.sync[1]);
  std::string error = read_child_error(p.err[0]);
  close_fd(p.err[0]);
  if (!mapped) error = std::string("writing the user namespace's maps: ") + std::strerror(map_errno);
  if (!error.empty() || plan.dry_run) {
    if (!error.empty()) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) error = "the sandbox's first process failed";
    if (!error.empty()) throw std::runtime_error(error);
  }
  return pid;
}

// Starts the runner as a plain child (no namespaces): its own process group, killed with
// the grader.
pid_t start_child(const ChildPlan& plan, Pipes& p) {
  const pid_t grader = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != grader) ::_exit(1);
    if (plan.limits && ::chdir("/") != 0) child_fail(p.err[1], "entering /", "");
    exec_runner(plan, p);
  }
  ::setpgid(pid, pid);
  for (int* end : {&p.req[0], &p.resp[1], &p.crash[1], &p.out[1], &p.err[1], &p.status[1], &p.sync[0], &p.sync[1]})
    close_fd(*end);
  std::string error = read_child_error(p.err[0]);
  close_fd(p.err[0]);
  if (!error.empty()) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error(error);
  }
  return pid;
}

// Can a child switch to `uid` (and its gid)? Not in a user namespace that maps only root.
bool uid_usable(uint32_t uid) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::setresgid(uid, uid, uid) == 0 && ::setresuid(uid, uid, uid) == 0 ? 0 : 1);
  int status = 1;
  if (pid > 0) ::waitpid(pid, &status, 0);
  return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool parse_mode(const std::string& text, Mode& mode) {
  if (text == "auto") mode = Mode::automatic;
  else if (text == "strict") mode = Mode::strict;
  else if (text == "off") mode = Mode::off;
  else return false;
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

std::string Isolation::describe() const {
  if (mode == Mode::off) return "sandbox: off (--sandbox=off): the runner runs with the grader's rights and no limits";
  std::string text;
  if (namespaces)
    text = "sandbox: user, mount, PID, network and IPC namespaces";
  else
    text = "sandbox: degraded, the runner sees the machine's files (" + missing + ")";
  if (separate_uid) text += "; uid " + std::to_string(uid);
  text += "; limits on memory, CPU, file size and processes";
  return text;
}

Isolation probe(Mode mode) {
  static std::map<Mode, Isolation> cache;
  if (auto it = cache.find(mode); it != cache.end()) return it->second;
  Isolation iso;
  iso.mode = mode;
  if (mode == Mode::off) {
    iso.missing = "--sandbox=off";
    return cache[mode] = iso;
  }
  iso.limits = true;
  iso.separate_uid = ::geteuid() == 0;
  iso.uid = iso.separate_uid ? runner_uid() : uint32_t(::geteuid());
  iso.namespaces = true;
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
  } catch (const std::exception& e) {
    iso.namespaces = false;
    iso.missing = std::string("namespaces unavailable: ") + e.what();
    if (iso.separate_uid && !uid_usable(iso.uid)) {
      iso.separate_uid = false;  // root of a user namespace that maps no other uid
      iso.missing += "; uid " + std::to_string(iso.uid) + " is not usable";
    }
  }
  return cache[mode] = iso;
}

std::string runner_path(const Isolation& iso, const SharedFile& file) {
  return iso.namespaces ? file.inside : file.source;
}

Spawned spawn(const std::string& executable, const Isolation& iso, const Limits& limits,
              const std::vector<SharedFile>& files) {
  if (iso.mode == Mode::strict && !iso.full())
    throw std::runtime_error("--sandbox=strict: the full isolation is not available (" + iso.missing + ")");
  if (!iso.namespaces && iso.mode != Mode::off) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ChildPlan plan = make_plan(executable, iso, limits, files);
  Pipes p = open_pipes();
  Spawned s;
  try {
    s.pid = iso.namespaces ? start_supervisor(plan, iso, p) : start_child(plan, p);
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

// The children of every thread of `pid` (/proc/PID/task/TID/children), zombies left out.
std::vector<pid_t> live_children(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream list(task.path() / "children");
    for (pid_t child; list >> child;) {
      std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t end = line.rfind(')');  // "pid (name) S ..."
      if (end != std::string::npos && end + 2 < line.size() && line[end + 2] != 'Z') out.push_back(child);
    }
  }
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
      for (pid_t pid : doomed) ::waitpid(pid, nullptr, 0);  // only the caller's children are waited for
  }
}

void sweep(const Isolation& iso) {
  if (iso.namespaces || iso.mode == Mode::off) return;
  kill_descendants(::getpid(), 0, true);
}

pid_t runner_of(pid_t supervisor) {
  const std::vector<pid_t> children = live_children(supervisor);
  return children.size() == 1 ? children[0] : -1;
}

bool uses_address_sanitizer(const std::string& executable) {
  struct stat st;
  if (::stat(executable.c_str(), &st) != 0) return false;
  static std::map<std::string, std::pair<std::pair<off_t, long>, bool>> cache;
  const auto key = std::make_pair(st.st_size, long(st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec));
  if (auto it = cache.find(executable); it != cache.end() && it->second.first == key) return it->second.second;
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
