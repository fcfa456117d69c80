// The learner's progress, remembered between runs in a small JSON file that git ignores
// (.grader/progress.json at the course root, or $KVCOURSE_PROGRESS).
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace course {

struct Progress {
  std::map<std::string, std::string> status;  // slug -> "passed" | "failing"

  static std::filesystem::path default_file();
  static Progress load(const std::filesystem::path& file);  // a missing or unreadable file is empty progress
  void save(const std::filesystem::path& file) const;       // best effort: never fails the grading
  std::string state(const std::string& slug) const;         // "passed", "failing" or "not run"
};

}  // namespace course
