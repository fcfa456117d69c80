// Watch mode, the learner's loop: edit src/, save, see the verdict. The grader watches the
// learner's folders (inotify, or polling where inotify is unavailable), waits for a save to
// settle, rebuilds only the runner, regrades the stage and redraws the verdict. Keys drive
// it from the terminal: n next stage, h hint (again: the next tier), l list, v verdict, r rerun, q quit.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "judge/grade.hpp"
#include "cli/report.hpp"

namespace course {

// The files whose content decides whether to rebuild: C++ sources and headers, but never
// an editor's droppings (vim's 4913 probe and *.swp, backups *~, emacs .#lock and #save#).
bool is_watched_source(const std::filesystem::path& file);

// Every watched source below `folders` (recursively): path -> hash of its content. Two
// equal snapshots mean no save changed anything worth a rebuild.
using SourceSnapshot = std::map<std::string, std::uint64_t>;
SourceSnapshot snapshot_sources(const std::vector<std::filesystem::path>& folders);

// The files that differ between two snapshots (added, removed or changed), sorted.
std::vector<std::string> changed_files(const SourceSnapshot& before, const SourceSnapshot& after);

// The compiler's first errors, trimmed to what concerns the files below `folders`: each
// line that names one of them (warnings left out), with the source excerpt under it, at
// most `max_errors` errors and `max_lines` lines. When no line names them (a link error,
// say), the lines that mention an error instead.
std::string trim_compiler_output(const std::string& output,
                                 const std::vector<std::filesystem::path>& folders,
                                 int max_errors = 3, size_t max_lines = 30);

// Runs a shell command (the rebuild) in its own process group, collecting its stdout and
// stderr together.
struct BuildResult {
  bool ok = false;
  int exit_code = -1;  // -1: ended by a signal
  std::string output;
  double seconds = 0;
};
BuildResult run_build(const std::string& shell_command);

// For a signal handler: asks a rebuild still running (its whole process group) to stop,
// and puts the terminal back the way it was. Both are async-signal-safe.
void stop_active_build();
void restore_terminal();

struct WatchOptions {
  const Stage* stage = nullptr;                // the stage graded first
  std::vector<std::filesystem::path> folders;  // watched recursively (src/, adapters/)
  std::filesystem::path display_root;          // paths are shown relative to this
  std::string rebuild_command;                 // e.g. cmake --build build --target runner-learner
  // A quicker command for the rounds after one full rebuild succeeded (empty: the same).
  // With Makefiles, the runner's own build.make: the libraries it links do not change
  // while the learner edits src/, and skipping their checks saves about a second.
  std::string quick_rebuild_command;
  GradeOptions grade;
  bool force_poll = false;                // poll even where inotify works
  int max_rounds = 0;                     // stop after this many verdicts (0: until q)
  // Quiet time after the last change event before a rebuild starts. An editor's save,
  // even "save all" or a write to a temporary file renamed over the original, is a burst
  // of events a few milliseconds apart; a rebuild started on a half-written file is
  // followed by another once the writing ends.
  std::chrono::milliseconds settle{100};
  std::chrono::milliseconds poll_interval{300};
  bool track_progress = false;  // record verdicts in progress_file
  std::filesystem::path progress_file;
  TextStyle style;
  bool clear_screen = false;  // stdout is a terminal
  std::string sandbox;        // "sandbox on", "sandbox degraded", "sandbox off" (footer)
  std::filesystem::path report_file;  // where `p` writes the HTML pictures (html_report.hpp)
};

// Runs the loop until `q`, the end of max_rounds, or a signal. Keys come from the terminal
// in raw mode, or, when standard input is not a terminal, as characters read from it (so a
// script or a test can drive it). Returns the last verdict's exit status: 0 the stage
// passes, 1 it fails or does not compile, 2 nothing could be watched.
int run_watch(const WatchOptions& options);

}  // namespace course
