#include "sandbox/uid.hpp"

#include <dirent.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace course::sandbox {

namespace fs = std::filesystem;

namespace {

bool lock_uid(uint32_t uid) { return hold_lock("kvcourse-runner-uid-" + std::to_string(uid)); }

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  bool zombie = false;
};

// Every process whose real uid is `uid`, from /proc.
std::vector<ProcessInfo> processes_of(uint32_t uid) {
  std::vector<ProcessInfo> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    std::ifstream status(std::string("/proc/") + e->d_name + "/status");
    ProcessInfo info;
    info.pid = pid_t(pid);
    bool mine = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("State:", 0) == 0) info.zombie = line.find('Z') != std::string::npos;
      if (line.rfind("PPid:", 0) == 0) info.ppid = pid_t(std::atol(line.c_str() + 5));
      if (line.rfind("Uid:", 0) == 0) mine = std::strtoul(line.c_str() + 4, nullptr, 10) == uid;
    }
    if (mine) out.push_back(info);
  }
  ::closedir(proc);
  return out;
}

uint64_t tree_bytes(const fs::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  uint64_t bytes = uint64_t(st.st_blocks) * 512;
  if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      bytes += tree_bytes(it->path());
  }
  return bytes;
}

}  // namespace

bool hold_lock(const std::string& name) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  if (name.size() + 1 > sizeof addr.sun_path) {
    ::close(fd);
    errno = ENAMETOOLONG;
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr),
             socklen_t(sizeof(sa_family_t) + 1 + name.size())) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return false;
  }
  return true;
}

uint32_t reserve_runner_uid(std::string& error) {
  static uint32_t reserved = 0;
  if (reserved) return reserved;
  if (const char* env = std::getenv("KVCOURSE_RUNNER_UID"); env && *env) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(env, &end, 10);
    if (!end || *end || v == 0 || v >= 0xffffffffu) {
      error = std::string("KVCOURSE_RUNNER_UID=") + env + " is not a uid above 0";
      return 0;
    }
    if (!lock_uid(uint32_t(v)) && !std::getenv("KVCOURSE_RUNNER_UID_SHARED")) {
      error = "uid " + std::to_string(v) +
              " ($KVCOURSE_RUNNER_UID) is held by another grader on this machine";
      return 0;
    }
    return reserved = uint32_t(v);
  }
  for (uint32_t uid = 64998; uid >= 64900; --uid)
    if (lock_uid(uid)) return reserved = uid;
  error = "every runner uid from 64900 to 64998 is held by another grader on this machine";
  return 0;
}

uint32_t reserve_another_runner_uid(std::string& error) {
  // A uid this grader holds already is refused by its lock like another grader's.
  for (uint32_t uid = 64998; uid >= 64900; --uid)
    if (lock_uid(uid)) return uid;
  error = "every runner uid from 64900 to 64998 is held by this or another grader";
  return 0;
}

bool uid_usable(uint32_t uid) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::setresgid(uid, uid, uid) == 0 && ::setresuid(uid, uid, uid) == 0 ? 0 : 1);
  int status = 1;
  if (pid > 0) ::waitpid(pid, &status, 0);
  return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int kill_uid(uint32_t uid, bool reap) {
  std::vector<ProcessInfo> left;
  for (int round = 0; round < 1000; ++round) {
    const pid_t killer = ::fork();
    if (killer == 0) {
      ::setgroups(0, nullptr);
      if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(2);
      ::_exit(::kill(-1, SIGKILL) == 0 ? 0 : 1);
    }
    if (killer > 0)
      while (::waitpid(killer, nullptr, 0) < 0 && errno == EINTR) {
      }
    left = processes_of(uid);
    if (reap)
      for (const ProcessInfo& p : left)
        if (p.zombie && p.ppid == ::getpid()) ::waitpid(p.pid, nullptr, WNOHANG);
    left = processes_of(uid);
    bool alive = false;
    for (const ProcessInfo& p : left) alive = alive || !p.zombie;
    if (left.empty() || (!reap && !alive)) return 0;
    ::usleep(1000);
  }
  return int(left.size());
}

uint64_t remove_uid_files(uint32_t uid, bool remove) {
  uint64_t bytes = 0;
  for (const char* folder : {"/tmp", "/var/tmp", "/dev/shm"}) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      struct stat st;
      if (::lstat(it->path().c_str(), &st) != 0 || st.st_uid != uid) continue;
      bytes += tree_bytes(it->path());
      if (remove) fs::remove_all(it->path(), ec);
    }
  }
  return bytes;
}

}  // namespace course::sandbox
