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
// $KVCOURSE_SANDBOX (set by the grader from --sandbox): "strict" fails the compile when the
// kernel refuses the namespaces, "off" runs the compiler as it is, and "auto" (the
// default) runs it as it is after a one-line warning.
#include <fcntl.h>
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

namespace fs = std::filesystem;
using course::sandbox::RootPlan;
using course::sandbox::RootStep;

namespace {

struct Request {
  RootPlan root;
  std::vector<char*> command;  // null-terminated
};

bool parse(int argc, char** argv, Request& r) {
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const bool show = std::strcmp(argv[i], "--show") == 0, write = std::strcmp(argv[i], "--write") == 0;
    if ((!show && !write) || i + 1 >= argc) return false;
    const std::string dir = fs::absolute(argv[++i]).lexically_normal().string();
    if (write) fs::create_directories(dir);  // the object folder of a target not built yet
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
  const std::string uid_map = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1";
  const char* failed = nullptr;
  const char* path = "";
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) != 0)
    failed = "creating namespaces";
  else if (!write_text("/proc/self/setgroups", "deny") || !write_text("/proc/self/uid_map", uid_map) ||
           !write_text("/proc/self/gid_map", gid_map))
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
  std::string message = std::string(failed) + (*path ? std::string(" ") + path : "") + ": " + std::strerror(errno);
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
    problem = pid < 0 ? std::string("cannot fork: ") + std::strerror(errno) : std::string(buf, size_t(n));
    return -1;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
  Request request;
  if (!parse(argc, argv, request)) {
    std::fprintf(stderr, "usage: sandbox-compile [--show DIR]... [--write DIR]... -- COMPILER ARGS...\n");
    return 2;
  }
  const char* env = std::getenv("KVCOURSE_SANDBOX");
  const std::string mode = env && *env ? env : "auto";
  if (mode != "off") {
    std::string problem;
    const int status = run_sandboxed(request, problem);
    if (problem.empty()) return status;
    if (mode == "strict") {
      std::fprintf(stderr, "sandbox-compile: error: cannot compile in the sandbox (--sandbox=strict): %s\n",
                   problem.c_str());
      return 1;
    }
    std::fprintf(stderr, "sandbox-compile: warning: compiling without the sandbox: %s\n", problem.c_str());
  }
  ::execv(request.command[0], request.command.data());
  std::fprintf(stderr, "sandbox-compile: cannot run %s: %s\n", request.command[0], std::strerror(errno));
  return 127;
}
