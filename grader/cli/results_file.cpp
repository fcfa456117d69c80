#include "cli/results_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace course {

namespace fs = std::filesystem;

std::string replace_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path temporary = folder / ("." + path.filename().string() + "." + std::to_string(::getpid()) + ".tmp");
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return "cannot write " + temporary.string() + ": " + std::strerror(errno);
  const char* p = content.data();
  size_t left = content.size();
  std::string error;
  while (left > 0 && error.empty()) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = "cannot write " + temporary.string() + ": " + std::strerror(errno);
    else p += n, left -= size_t(n);
  }
  if (error.empty() && ::fsync(fd) != 0) error = "cannot flush " + temporary.string() + ": " + std::strerror(errno);
  ::close(fd);
  if (error.empty() && ::rename(temporary.c_str(), path.c_str()) != 0)
    error = "cannot replace " + path.string() + ": " + std::strerror(errno);
  if (!error.empty()) ::unlink(temporary.c_str());
  return error;
}

}  // namespace course
