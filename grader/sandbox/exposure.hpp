// What the runner's uid can reach, for the uid mode (grader/SANDBOX.md, "The uid mode"):
// without a mount namespace the runner sees the machine's files, so the answers (the
// fixtures, the hidden set, the reference runner and the programs beside the grader)
// must be closed to its uid by their modes. The grader checks them at start and closes
// what it may (it is root there), or refuses to grade, naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace course::sandbox {

// "" when `uid` (its gid the same number, no other group) cannot reach `path` or read
// it: some folder on the way denies it search, or the path itself denies it reading and
// searching; else the path through which it can. Permissions only (no ACLs).
std::string exposed_to(const std::filesystem::path& path, uint32_t uid);

// Closes each of `secrets` that exists and is exposed to `uid` by taking away the rights
// of others (chmod o-rwx, and g-rwx when its group is the uid's) on the path itself.
// `changed` lists what it changed. Returns "" or why a path stays exposed.
std::string hide_from_uid(const std::vector<std::filesystem::path>& secrets, uint32_t uid,
                          std::vector<std::string>& changed);

// The results folder (of --output) when the runner's uid may write into it: the sticky
// bit is set so that it cannot rename or remove the grader's files there (the grader's
// own temporary names are random and created exclusively). Returns "" or why not.
std::string guard_results_folder(const std::filesystem::path& folder, uint32_t uid,
                                 std::vector<std::string>& changed);

}  // namespace course::sandbox
