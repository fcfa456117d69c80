// A uid of the runner's own, for the uid mode (grader/SANDBOX.md, "The uid mode"): where
// the kernel refuses namespaces but the grader is root (Docker, Gradescope, Exercism), the
// runner and the learner's compile run as a uid that no other process uses, so that the
// uid's rights are exactly the runner's: it can signal only itself, read only what others
// may read, and everything running as it can be found and killed.
#pragma once

#include <cstdint>
#include <string>

namespace course::sandbox {

// Binds the abstract unix socket `name` and keeps it until the process exits: a lock the
// kernel releases when its holder ends, whatever the way. False while another holds it
// (errno EADDRINUSE), or when the socket cannot be made (errno says why).
bool hold_lock(const std::string& name);

// The uid (and gid, the same number) of this grader's runners, held until the process
// exits: $KVCOURSE_RUNNER_UID, else the first of 64998, 64997, ... 64900 that no other
// grader on the machine holds (a lock: an abstract unix socket named after it). 0, with
// `error` set, when none is free.
uint32_t reserve_runner_uid(std::string& error);

// One more uid for a second runner at once (the uid mode, one uid per runner): the first
// of 64998, 64997, ... 64900 that neither this grader nor another holds, held until the
// process exits. 0, with `error` set, when none is free.
uint32_t reserve_another_runner_uid(std::string& error);

// Can a child switch to `uid` and its gid? Not in a user namespace that maps only root.
bool uid_usable(uint32_t uid);

// Kills every process running as `uid` (SIGKILL from a child that becomes the uid: what
// it may signal is exactly those processes) until none is left alive, and with `reap`
// reaps those that are the caller's children until none is left at all; gives up after
// about a second. Returns how many were left.
int kill_uid(uint32_t uid, bool reap = true);

// Removes what `uid` left in the folders every user may write (/tmp, /var/tmp, /dev/shm):
// the entries it owns at their top level. Returns their size in bytes, counted first.
uint64_t remove_uid_files(uint32_t uid, bool remove);

}  // namespace course::sandbox
