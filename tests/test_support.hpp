// Shared helpers for the test suite: running the built programs as commands, temporary
// folders, and the paths the build passes in.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef KVCOURSE_SOURCE_DIR
#error "the build defines KVCOURSE_SOURCE_DIR"
#endif
#ifndef KVCOURSE_BIN_DIR
#error "the build defines KVCOURSE_BIN_DIR"
#endif

namespace testing_support {

inline std::filesystem::path source_dir() { return KVCOURSE_SOURCE_DIR; }
inline std::filesystem::path bin_dir() { return KVCOURSE_BIN_DIR; }
inline std::string bin(const std::string& name) { return (bin_dir() / name).string(); }

// Whether `part` occurs anywhere in `text`: the suite's usual check of a message.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `p` in single quotes, for a command line run through the shell (paths here hold no quote).
inline std::string sh_quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

struct CommandResult {
  int exit_code = -1;   // -1 when killed by a signal
  std::string output;   // stdout, and stderr when merged
};

// Runs `command` through the shell; stderr is merged into the output unless
// merge_stderr is false (then it goes to the test's own stderr).
inline CommandResult run(const std::string& command, bool merge_stderr = true) {
  CommandResult r;
  std::string full = command + (merge_stderr ? " 2>&1" : "");
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh folder under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("kvcourse-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Processes whose environment holds `entry` ("NAME=value"): what is left of a command
// started with that variable. Reads /proc/PID/environ, which the test may read for its own
// uid's processes and, as root, for every one.
inline std::vector<int> processes_with_environment(const std::string& entry) {
  std::vector<int> found;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(name) == ::getpid()) continue;
    std::ifstream in(dir.path() / "environ", std::ios::binary);
    std::string var;
    while (std::getline(in, var, '\0'))
      if (var == entry) {
        found.push_back(std::stoi(name));
        break;
      }
  }
  return found;
}

// A value no other process has: for a variable that marks a command's processes.
inline std::string unique_token() {
  std::random_device rd;
  return std::to_string(::getpid()) + "-" + std::to_string(rd()) + std::to_string(rd());
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace testing_support
