#include "sandbox/seccomp.hpp"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace course::sandbox {

namespace {

// Refused with EPERM in every filter: the network and every socket (AF_UNIX too: the
// runner talks to the grader over the pipes it was given), reading or writing other
// processes, the kernel's keyrings, BPF, performance counters, userfaultfd and io_uring
// (whose operations seccomp does not see), mounts and namespaces, modules, and the other
// calls only an administrator needs.
const char* const kAlwaysRefused[] = {"socket",
                                      "socketpair",
                                      "process_vm_readv",
                                      "process_vm_writev",
                                      "pidfd_open",
                                      "pidfd_getfd",
                                      "pidfd_send_signal",
                                      "kcmp",
                                      "keyctl",
                                      "add_key",
                                      "request_key",
                                      "bpf",
                                      "perf_event_open",
                                      "userfaultfd",
                                      "io_uring_setup",
                                      "io_uring_enter",
                                      "io_uring_register",
                                      "mount",
                                      "umount2",
                                      "pivot_root",
                                      "chroot",
                                      "unshare",
                                      "setns",
                                      "fsopen",
                                      "fsmount",
                                      "fsconfig",
                                      "fspick",
                                      "move_mount",
                                      "open_tree",
                                      "mount_setattr",
                                      "open_by_handle_at",
                                      "name_to_handle_at",
                                      "init_module",
                                      "finit_module",
                                      "delete_module",
                                      "kexec_load",
                                      "kexec_file_load",
                                      "reboot",
                                      "swapon",
                                      "swapoff",
                                      "acct",
                                      "quotactl",
                                      "iopl",
                                      "ioperm",
                                      "fanotify_init",
                                      "lookup_dcookie",
                                      "syslog",
                                      "vhangup",
                                      "settimeofday",
                                      "clock_settime",
                                      "clock_adjtime",
                                      "adjtimex",
                                      "sethostname",
                                      "setdomainname"};

constexpr unsigned long kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                                          CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                                          CLONE_NEWCGROUP | CLONE_NEWTIME;

std::string build(FilterKind kind, std::vector<sock_filter>& code) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  // The caller sets no_new_privs itself; 32-bit system calls (another architecture) kill.
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  std::string error;
  auto refuse = [&](int nr, int err, unsigned count = 0, const scmp_arg_cmp* args = nullptr) {
    if (error.empty() && nr != __NR_SCMP_ERROR) {
      const int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, count, args);
      if (rc != 0) error = std::string("seccomp_rule_add: ") + std::strerror(-rc);
    }
  };
  for (const char* name : kAlwaysRefused) refuse(seccomp_syscall_resolve_name(name), EPERM);
  // clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes glibc fall
  // back to clone, whose flags it can.
  refuse(seccomp_syscall_resolve_name("clone3"), ENOSYS);
  const int clone_nr = seccomp_syscall_resolve_name("clone");
  for (unsigned long bit = 1; bit != 0; bit <<= 1) {
    if (!(kNamespaceFlags & bit)) continue;
    const scmp_arg_cmp ns = SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit);
    refuse(clone_nr, EPERM, 1, &ns);
  }
  if (kind != FilterKind::runner_sanitizer) refuse(seccomp_syscall_resolve_name("ptrace"), EPERM);
  if (kind == FilterKind::runner) {
    // Threads only: a clone without CLONE_THREAD, fork and vfork make a new process. So
    // the address-space limit of the one process is the whole runner's memory.
    const scmp_arg_cmp process = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
    refuse(clone_nr, EPERM, 1, &process);
    refuse(seccomp_syscall_resolve_name("fork"), EPERM);
    refuse(seccomp_syscall_resolve_name("vfork"), EPERM);
  }
  if (error.empty()) {
    const int fd = ::memfd_create("kvcourse-seccomp", MFD_CLOEXEC);
    if (fd < 0) error = std::string("memfd_create: ") + std::strerror(errno);
    if (error.empty() && seccomp_export_bpf(ctx, fd) != 0) error = "seccomp_export_bpf failed";
    if (error.empty()) {
      const off_t size = ::lseek(fd, 0, SEEK_END);
      code.resize(size_t(size) / sizeof(sock_filter));
      if (size <= 0 || ::pread(fd, code.data(), size_t(size), 0) != ssize_t(size)) {
        error = "reading the exported filter failed";
        code.clear();
      }
    }
    if (fd >= 0) ::close(fd);
  }
  seccomp_release(ctx);
  return error;
}

}  // namespace

const FilterProgram& filter_program(FilterKind kind) {
  static std::mutex lock;  // runners start from several threads (grade.cpp, make-fixtures)
  std::lock_guard<std::mutex> hold(lock);
  static std::map<FilterKind, FilterProgram> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  FilterProgram program;
  program.error = build(kind, program.code);
  return cache[kind] = program;
}

bool install_filter(const FilterProgram& program) {
  if (program.code.empty()) {
    errno = EINVAL;
    return false;
  }
  sock_fprog prog;
  prog.len = static_cast<unsigned short>(program.code.size());
  prog.filter = const_cast<sock_filter*>(program.code.data());
  return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
}

std::string filter_summary(FilterKind kind) {
  std::string text = "no sockets, no mounts or namespaces, no access to other processes' memory";
  if (kind != FilterKind::runner_sanitizer) text += ", no ptrace";
  if (kind == FilterKind::runner) text += ", no new process (threads only)";
  return text;
}

}  // namespace course::sandbox
