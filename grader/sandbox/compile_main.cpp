// sandbox-compile: the compiler launcher of the learner's runner (CMake's
// CXX_COMPILER_LAUNCHER). It runs the compiler in a file system that holds the system
// (/usr and its links), the folders given with --show (read-only) and --write (writable),
// and a scratch /tmp; nothing else of the machine. So an #include, or an assembler
// .incbin, that names reference/, fixtures/, tests/, grader/ or any other path of the
// course, relative or absolute, finds no file: the learner's code compiles against the
// course interface and the model's public headers only (grader/SANDBOX.md).
//
//   sandbox-compile [--show DIR]... [--write DIR]... -- COMPILER ARGS...
//
// Where the kernel refuses the namespaces and this runs as root (a container), the uid
// mode: the compiler runs as the runner's uid ($KVCOURSE_RUNNER_UID, lent by the grader,
// else one reserved here), under the compiler's system call filter (seccomp.hpp), with the
// object folders handed to that uid. It sees the machine's files, but the grader has
// closed the answers to that uid (exposure.hpp, SANDBOX.md "The uid mode").
//
// $KVCOURSE_SANDBOX (set by the grader from --sandbox): "strict" fails the compile when
// neither namespaces nor the uid mode can be had, "uid" skips the namespaces, "off" runs
// the compiler as it is, and "auto" (the default) runs it as it is after a one-line
// warning. Each compile appends the isolation it had, one line, to $KVCOURSE_COMPILE_REPORT
// when that is set (the grader reports it in the results).
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/root.hpp"
#include "sandbox/seccomp.hpp"
#include "sandbox/uid.hpp"

namespace fs = std::filesystem;
using course::sandbox::RootPlan;
using course::sandbox::RootStep;

namespace {

struct Request {
  RootPlan root;
  std::vector<std::string> writable;  // the --write folders
  std::vector<char*> command;         // null-terminated
};

bool parse(int argc, char** argv, Request& r) {
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const bool show = std::strcmp(argv[i], "--show") == 0,
               write = std::strcmp(argv[i], "--write") == 0;
    if ((!show && !write) || i + 1 >= argc) return false;
    const std::string dir = fs::absolute(argv[++i]).lexically_normal().string();
    if (write) fs::create_directories(dir);  // the object folder of a target not built yet
    if (write) r.writable.push_back(dir);
    r.root.binds.push_back({dir, dir, write});
  }
  if (i + 1 >= argc) return false;
  for (++i; i < argc; ++i) r.command.push_back(argv[i]);
  r.command.push_back(nullptr);
  return true;
}

bool write_text(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  return ok;
}

// The child: a user namespace that maps only our own uid and gid onto themselves (so the
// objects it writes are ours), a mount namespace holding the plan's file system, no
// network. Writes the failed step on `err` and exits 126, or becomes the compiler.
[[noreturn]] void compile_in_sandbox(const std::vector<RootStep>& steps, char** command, int err) {
  const std::string uid_map =
      std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map =
      std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1";
  const char* failed = nullptr;
  const char* path = "";
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) != 0)
    failed = "creating namespaces";
  else if (!write_text("/proc/self/setgroups", "deny") ||
           !write_text("/proc/self/uid_map", uid_map) || !write_text("/proc/self/gid_map", gid_map))
    failed = "mapping the user namespace";
  else
    failed = course::sandbox::enter_root(steps, &path);
  if (!failed) {
    struct rlimit cpu = {600, 600};
    ::setrlimit(RLIMIT_CPU, &cpu);  // a compile that never ends is stopped
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::execv(command[0], command);
    failed = "starting the compiler";
    path = command[0];
  }
  std::string message =
      std::string(failed) + (*path ? std::string(" ") + path : "") + ": " + std::strerror(errno);
  (void)!::write(err, message.data(), message.size());
  ::_exit(126);
}

// Runs the compiler in the sandbox and returns its exit status; sets `problem` (and
// returns -1) when the sandbox could not be built.
int run_sandboxed(const Request& r, std::string& problem) {
  std::vector<RootStep> steps;
  try {
    RootPlan plan = r.root;
    plan.etc_files = {"ld.so.cache", "alternatives"};
    plan.scratch_bytes = uint64_t(1) << 30;  // the compiler's temporary files
    plan.workdir = fs::current_path().string();
    steps = course::sandbox::plan_root(plan);
  } catch (const std::exception& e) {
    problem = e.what();
    return -1;
  }
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) {
    problem = std::string("cannot create a pipe: ") + std::strerror(errno);
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid == 0) compile_in_sandbox(steps, const_cast<char**>(r.command.data()), err[1]);
  ::close(err[1]);
  char buf[512];
  ssize_t n;
  while ((n = ::read(err[0], buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  ::close(err[0]);
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid < 0 || n > 0) {
    problem =
        pid < 0 ? std::string("cannot fork: ") + std::strerror(errno) : std::string(buf, size_t(n));
    return -1;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// Waits until no other compile runs as `uid` (make runs several at once), and holds that
// until this process exits: an abstract unix socket named after the uid. Compiles in the
// uid mode run one at a time, so that one's sweep of the uid's processes and its return of
// the object folders cannot hit another.
bool wait_for_uid(uint32_t uid) {
  const std::string name = "kvcourse-compile-uid-" + std::to_string(uid);
  for (int attempt = 0; attempt < 60000; ++attempt) {  // 10 minutes at most
    if (course::sandbox::hold_lock(name)) return true;
    if (errno != EADDRINUSE) return false;
    ::usleep(10000);
  }
  return false;
}

// The uid mode: the compiler as the runner's uid, the object folders its own. Returns the
// compiler's status, or -1 with `problem` set.
int run_as_runner_uid(const Request& r, std::string& problem, uint32_t& uid) {
  if (::geteuid() != 0) {
    problem = "not root, so the compiler cannot have a uid of its own";
    return -1;
  }
  uid = course::sandbox::reserve_runner_uid(problem);
  if (uid == 0) return -1;
  if (!course::sandbox::uid_usable(uid)) {
    problem = "uid " + std::to_string(uid) + " is not usable";
    return -1;
  }
  const course::sandbox::FilterProgram& filter =
      course::sandbox::filter_program(course::sandbox::FilterKind::compiler);
  if (!filter.error.empty()) {
    problem = "no system call filter: " + filter.error;
    return -1;
  }
  if (!wait_for_uid(uid)) {
    problem = "another compile held uid " + std::to_string(uid) + " for 10 minutes";
    return -1;
  }
  course::sandbox::kill_uid(uid);
  // The object folders are the uid's while it compiles, and ours again afterwards (a later
  // compile in namespaces, which map only our uid, must be able to write them).
  auto hand_over = [&](uid_t owner, gid_t group) {
    for (const std::string& dir : r.writable) {
      std::error_code ec;
      (void)!::chown(dir.c_str(), owner, group);
      for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        // A compiler makes no link: one planted by the uid could make the linker (ours)
        // read a file the uid may not, such as another implementation's object.
        if (owner != uid && it->is_symlink())
          (void)!::unlink(it->path().c_str());
        else
          (void)!::lchown(it->path().c_str(), owner, group);
      }
    }
  };
  hand_over(uid, uid);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setgroups(0, nullptr);
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(126);
    struct rlimit cpu = {600, 600};
    ::setrlimit(RLIMIT_CPU, &cpu);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!course::sandbox::install_filter(filter)) ::_exit(126);
    ::execv(r.command[0], r.command.data());
    ::_exit(127);
  }
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  course::sandbox::kill_uid(uid);  // nothing the compile started stays
  hand_over(::geteuid(), ::getegid());
  if (pid < 0) {
    problem = std::string("cannot fork: ") + std::strerror(errno);
    return -1;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// One line for $KVCOURSE_COMPILE_REPORT, when it is set.
void report(const std::string& line) {
  const char* file = std::getenv("KVCOURSE_COMPILE_REPORT");
  if (!file || !*file) return;
  const int fd = ::open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  Request request;
  if (!parse(argc, argv, request)) {
    std::fprintf(stderr,
                 "usage: sandbox-compile [--show DIR]... [--write DIR]... -- COMPILER ARGS...\n");
    return 2;
  }
  const char* env = std::getenv("KVCOURSE_SANDBOX");
  const std::string mode = env && *env ? env : "auto";
  if (mode != "off") {
    std::string problem = "--sandbox=uid";
    if (mode != "uid") {
      problem.clear();
      const int status = run_sandboxed(request, problem);
      if (problem.empty()) {
        report("compile sandbox: namespaces (the course's files out of sight)");
        return status;
      }
    }
    std::string uid_problem;
    uint32_t uid = 0;
    const int status = run_as_runner_uid(request, uid_problem, uid);
    if (uid_problem.empty()) {
      report("compile sandbox: uid " + std::to_string(uid) + ", no namespaces (" + problem +
             "): the answers closed to that uid");
      return status;
    }
    problem += "; " + uid_problem;
    if (mode == "strict" || mode == "uid") {
      std::fprintf(stderr,
                   "sandbox-compile: error: cannot compile in the sandbox (--sandbox=%s): %s\n",
                   mode.c_str(), problem.c_str());
      report("compile sandbox: refused (" + problem + ")");
      return 1;
    }
    std::fprintf(stderr, "sandbox-compile: warning: compiling without the sandbox: %s\n",
                 problem.c_str());
    report("compile sandbox: NONE, the compiler saw every file of the machine (" + problem + ")");
  } else {
    report("compile sandbox: off (--sandbox=off)");
  }
  ::execv(request.command[0], request.command.data());
  std::fprintf(stderr, "sandbox-compile: cannot run %s: %s\n", request.command[0],
               std::strerror(errno));
  return 127;
}
