// The learner's progress, remembered between runs in a small JSON file that git ignores
// (.grader/progress.json at the course root, or $KVCOURSE_PROGRESS). Only verdicts on the
// learner's own code are recorded (never --impl reference or --runner), and how many of
// each stage's hint tiers the learner has opened (never part of an autograder's results).
#pragma once

#include <filesystem>
#include <map>
#include <ostream>
#include <string>

namespace course {

struct Stage;

struct Progress {
  std::map<std::string, std::string> status;  // slug -> "passed" | "failing"
  std::map<std::string, int> hints_opened;     // slug -> tiers opened, from 1 (absent: none)
  // Stage speed: the learner's last measured tokens per CPU-second and its ratio to the
  // model's own loop (judge/speed.hpp), shown by --list.
  struct Speed {
    double tokens_per_s = 0;
    double ratio = 0;
  };
  std::map<std::string, Speed> speed;
  // Records a graded stage: its state, and its speed when it was measured.
  void record(const std::string& slug, bool passed, double tokens_per_s, double ratio);

  static std::filesystem::path default_file();
  static Progress load(
      const std::filesystem::path& file);  // a missing or unreadable file is empty progress
  // Best effort: never fails the grading. When the file cannot be written, one warning
  // line goes to stderr (the first time in the process only) and save returns false.
  bool save(const std::filesystem::path& file) const;
  std::string state(const std::string& slug) const;    // "passed", "failing" or "not run"
  // Tiers of `stage`'s hints opened so far, at most as many as it has.
  int hints(const Stage& stage) const;

  // The first stage not passed yet (what `grader` with no arguments grades); null when
  // every stage passes.
  const Stage* first_unpassed() const;
};

// Every stage, one a line, with its state (and "hints 2/3" once a hint was opened, and
// the last speed measured, "11.5 tokens per CPU-second, 0.68 of the model's loop"); the first one not
// passed is marked "<- next".
void print_stage_list(std::ostream& out, const Progress& progress);

}  // namespace course
