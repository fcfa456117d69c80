// no-namespaces COMMAND ARGS...: runs COMMAND where the kernel refuses new namespaces, as
// Docker's default seccomp profile does (clone and unshare with a namespace flag fail with
// EPERM, clone3 with ENOSYS), so that the tests can put the grader, as root, where
// Gradescope and Exercism put it: the uid mode (grader/SANDBOX.md).
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: no-namespaces COMMAND ARGS...\n");
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  const unsigned long flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
                                 CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};
  bool ok = ctx != nullptr;
  for (unsigned long flag : flags) {
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
  }
  ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0) == 0;
  ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
  // Like a container's root: no_new_privs is not set, so setuid programs still work.
  ok = ok && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) == 0 && seccomp_load(ctx) == 0;
  if (!ok) {
    std::fprintf(stderr, "no-namespaces: cannot install the filter: %s\n", std::strerror(errno));
    return 2;
  }
  seccomp_release(ctx);
  ::execvp(argv[1], argv + 1);
  std::fprintf(stderr, "no-namespaces: cannot run %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
