#include "sandbox/exposure.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace course::sandbox {

namespace fs = std::filesystem;

namespace {

// The rights `uid` has on a file of this mode (rwx as 4, 2, 1).
unsigned rights(const struct stat& st, uint32_t uid) {
  if (st.st_uid == uid) return (st.st_mode >> 6) & 7;
  if (st.st_gid == uid) return (st.st_mode >> 3) & 7;
  return st.st_mode & 7;
}

}  // namespace

std::string exposed_to(const fs::path& path, uint32_t uid) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return "";
  fs::path at = "/";
  struct stat st;
  for (const fs::path& part : real.relative_path()) {
    if (::stat(at.c_str(), &st) != 0 || !(rights(st, uid) & 1)) return "";
    at /= part;
  }
  if (::stat(real.c_str(), &st) != 0) return "";
  const unsigned r = rights(st, uid);
  return (S_ISDIR(st.st_mode) ? (r & 5) : (r & 4)) ? real.string() : "";
}

std::string hide_from_uid(const std::vector<fs::path>& secrets, uint32_t uid,
                          std::vector<std::string>& changed) {
  for (const fs::path& secret : secrets) {
    const std::string path = exposed_to(secret, uid);
    if (path.empty()) continue;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    if (st.st_uid == uid) return path + " belongs to the runner's uid " + std::to_string(uid);
    mode_t mode = st.st_mode & 07777 & ~mode_t(S_IRWXO);
    if (st.st_gid == uid) mode &= ~mode_t(S_IRWXG);
    if (::chmod(path.c_str(), mode) != 0)
      return path + " is readable by the runner's uid " + std::to_string(uid) +
             " and cannot be closed (chmod: " + std::strerror(errno) + ")";
    if (!exposed_to(path, uid).empty()) return path + " is still readable by the runner's uid";
    changed.push_back(path);
  }
  return "";
}

std::string guard_results_folder(const fs::path& folder, uint32_t uid,
                                 std::vector<std::string>& changed) {
  std::error_code ec;
  const fs::path real = fs::canonical(folder, ec);
  struct stat st;
  if (ec || ::stat(real.c_str(), &st) != 0) return "";
  if (st.st_uid == uid)
    return "the results folder " + real.string() + " belongs to the runner's uid";
  if (!(rights(st, uid) & 2) || (st.st_mode & S_ISVTX)) return "";
  if (::chmod(real.c_str(), (st.st_mode & 07777) | S_ISVTX) != 0)
    return "the results folder " + real.string() +
           " is writable by the runner's uid and its sticky bit cannot be set (" +
           std::strerror(errno) + ")";
  changed.push_back(real.string() + " (sticky bit)");
  return "";
}

}  // namespace course::sandbox
