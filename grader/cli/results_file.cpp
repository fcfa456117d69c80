#include "cli/results_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace course {

namespace fs = std::filesystem;

std::string replace_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  // A name nobody can guess, created exclusively: whatever is planted in the folder (a
  // file, a folder, a link at any name) is never written through or renamed.
  std::random_device random;
  fs::path temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    char name[17];
    std::snprintf(name, sizeof name, "%08x%08x", unsigned(random()), unsigned(random()));
    temporary = folder / ("." + path.filename().string() + "." + name + ".tmp");
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return "cannot write " + temporary.string() + ": " + std::strerror(errno);
  const char* p = content.data();
  size_t left = content.size();
  std::string error;
  while (left > 0 && error.empty()) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      error = "cannot write " + temporary.string() + ": " + std::strerror(errno);
    else
      p += n, left -= size_t(n);
  }
  if (error.empty() && ::fsync(fd) != 0)
    error = "cannot flush " + temporary.string() + ": " + std::strerror(errno);
  ::close(fd);
  if (error.empty() && ::rename(temporary.c_str(), path.c_str()) != 0)
    error = "cannot replace " + path.string() + ": " + std::strerror(errno);
  if (!error.empty()) ::unlink(temporary.c_str());
  return error;
}

}  // namespace course
