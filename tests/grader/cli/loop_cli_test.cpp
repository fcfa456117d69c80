// The learner's loop as a command: `grader --watch` driven through its standard input
// (keys) and output (verdicts), progress between runs, and the autograder formats.
//
// Watch tests never touch the real src/: they watch a temporary folder with a fake
// rebuild (a script that picks a passing or a failing runner), or the sandbox copy of the
// reference in the build folder, rebuilt for real with `cmake --build`
// (tests/grader/CMakeLists.txt).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_support.hpp"

#ifndef KVCOURSE_WATCH_SANDBOX
#error "tests/grader/CMakeLists.txt defines KVCOURSE_WATCH_SANDBOX"
#endif

using testing_support::has;
using testing_support::bin;
using testing_support::read_file;
using testing_support::run;
using testing_support::source_dir;
using testing_support::TempDir;
using testing_support::write_file;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Each verdict in watch mode ends with this footer line.
constexpr const char* kFooter = "Keys: n next stage";

// `grader --watch ...` as a child process: keys go to its standard input, its output
// (stdout and stderr) is collected as it comes.
class WatchProcess {
 public:
  WatchProcess(const std::vector<std::string>& args, const TempDir& state) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    const std::string progress = (state / "progress.json").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::close(in[1]);
      ::close(out[0]);
      ::setenv("KVCOURSE_PROGRESS", progress.c_str(), 1);
      ::setenv("NO_COLOR", "1", 1);
      std::vector<std::string> all = {bin("grader")};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    keys_fd_ = in[1];
    out_fd_ = out[0];
    ::fcntl(out_fd_, F_SETFL, ::fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  }

  ~WatchProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGTERM);  // the grader stops its own build and runner
      for (int i = 0; i < 200 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(10ms);
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, WNOHANG);
    }
    if (keys_fd_ >= 0) ::close(keys_fd_);
    ::close(out_fd_);
  }

  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

  void send(const std::string& keys) {
    ASSERT_EQ(::write(keys_fd_, keys.data(), keys.size()), ssize_t(keys.size()));
  }

  int rounds() const {
    int n = 0;
    for (size_t at = output_.find(kFooter); at != std::string::npos;
         at = output_.find(kFooter, at + 1))
      ++n;
    return n;
  }

  // The text of the last complete verdict (from the previous footer to the last one).
  std::string last_round() const {
    size_t end = output_.rfind(kFooter);
    if (end == std::string::npos) return "";
    size_t begin = end == 0 ? std::string::npos : output_.rfind(kFooter, end - 1);
    return output_.substr(begin == std::string::npos ? 0 : begin,
                          end - (begin == std::string::npos ? 0 : begin));
  }

  // Reads output until `done()` holds or the time is up.
  bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{out_fd_, POLLIN, 0};
      if (::poll(&p, 1, int(std::min<long>(left.count(), 100))) > 0) {
        char buf[4096];
        ssize_t n = ::read(out_fd_, buf, sizeof buf);
        if (n > 0) output_.append(buf, size_t(n));
        if (n == 0) return done();  // the grader is gone
      }
    }
    return true;
  }

  bool wait_rounds(int n, std::chrono::milliseconds timeout = 120s) {
    return wait_until([&] { return rounds() >= n; }, timeout);
  }

  // Waits for a verdict that passes (or fails), whatever rounds come before it.
  bool wait_verdict(bool pass, std::chrono::milliseconds timeout = 120s) {
    return wait_until(
        [&] {
          std::string r = last_round();
          bool passes = has(r, ") passes.");
          return !r.empty() && passes == pass &&
                 (passes || has(r, " cases pass") || has(r, "does not compile"));
        },
        timeout);
  }

  // Closes the keys pipe and waits for the exit status (-signal when killed).
  int wait_exit(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      wait_until([] { return false; }, 20ms);  // keep draining output
      if (std::chrono::steady_clock::now() > deadline) return -1000;
    }
    wait_until([] { return false; }, 20ms);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int keys_fd_ = -1, out_fd_ = -1;
  bool exited_ = false;
  std::string output_;
};

// A watched folder with one file, a.cpp, and a fake rebuild: it counts its runs and makes
// `runner` the reference runner (stage passes) unless a.cpp says BROKEN (then a runner
// that exits at once: every case fails).
struct FakeCourse {
  TempDir dir;
  fs::path watched = dir / "src";
  fs::path runner = dir / "runner";
  fs::path builds = dir / "builds.log";

  // `good`: the runner a build without BROKEN links (a known mistake's, for a failing verdict).
  explicit FakeCourse(const std::string& good = "runner-reference") {
    write_file(watched / "a.cpp", "int a = 1;\n");
    write_file(dir / "failing-runner", "#!/bin/sh\nexit 3\n");
    fs::permissions(dir / "failing-runner", fs::perms::owner_all);
    write_file(dir / "rebuild.sh",
               "echo build >> '" + builds.string() + "'\n" + "if grep -q BROKEN '" +
                   (watched / "a.cpp").string() + "'; then\n" + "  ln -sf '" +
                   (dir / "failing-runner").string() + "' '" + runner.string() +
                   "'\nelse\n  ln -sf '" + bin(good) + "' '" + runner.string() + "'\nfi\n");
  }

  std::vector<std::string> args(std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {
        "--stage",       "cache-structure",   "--watch",
        "--watch-dir",   watched.string(),    "--runner",
        runner.string(), "--rebuild-command", "sh '" + (dir / "rebuild.sh").string() + "'"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  int build_count() const {
    std::string log = read_file(builds);
    return int(std::count(log.begin(), log.end(), '\n'));
  }
};

}  // namespace

// --- watch mode, fake rebuild --------------------------------------------------------------

TEST(watch_cli, verdict_follows_the_saved_content) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  EXPECT_TRUE(has(w.output(), "(inotify)")) << w.output();

  write_file(course.watched / "a.cpp", "int a = 1;  // BROKEN\n");
  ASSERT_TRUE(w.wait_verdict(false)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "a.cpp changed")) << w.last_round();
  EXPECT_TRUE(has(w.last_round(), "exited with status 3")) << w.last_round();

  write_file(course.watched / "a.cpp", "int a = 2;\n");
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
}

// The cases loaded for one round serve the next unless a fixture file changed: a round
// after a fixture is removed grades the cases that are left, not the ones loaded before.
TEST(watch_cli, a_changed_fixture_folder_is_loaded_again) {
  FakeCourse course;
  TempDir state;
  const fs::path fixtures = course.dir / "fixtures";
  fs::create_directories(fixtures);
  fs::copy(source_dir() / "fixtures" / "cache-structure", fixtures / "cache-structure", fs::copy_options::recursive);
  WatchProcess w(course.args({"--fixtures", fixtures.string()}), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "all 10 cases pass")) << w.last_round();

  write_file(course.watched / "a.cpp", "int a = 2;\n");  // the same fixtures: all ten again
  ASSERT_TRUE(w.wait_rounds(2)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "all 10 cases pass")) << w.last_round();

  fs::remove(fixtures / "cache-structure" / "10-read-by-the-grader.json");
  write_file(course.watched / "a.cpp", "int a = 3;\n");
  ASSERT_TRUE(w.wait_rounds(3)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "all 9 cases pass")) << w.last_round();
  EXPECT_FALSE(has(w.last_round(), "10-read-by-the-grader")) << w.last_round();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
}

TEST(watch_cli, saves_by_rename_are_noticed) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();

  // Write a temporary file, then rename it over the original (many editors, atomic saves).
  write_file(course.watched / "a.cpp.tmp", "int a = 1;  // BROKEN\n");
  fs::rename(course.watched / "a.cpp.tmp", course.watched / "a.cpp");
  ASSERT_TRUE(w.wait_verdict(false)) << w.output();

  // vim with `backupcopy=no`: probe file 4913, original renamed to a backup, a new file
  // written, the backup removed.
  write_file(course.watched / "4913", "");
  fs::remove(course.watched / "4913");
  fs::rename(course.watched / "a.cpp", course.watched / "a.cpp~");
  write_file(course.watched / "a.cpp", "int a = 3;\n");
  fs::remove(course.watched / "a.cpp~");
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0);
}

TEST(watch_cli, saves_that_change_nothing_are_ignored) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_rounds(1)) << w.output();

  write_file(course.watched / "a.cpp", "int a = 1;\n");  // the same bytes again
  fs::last_write_time(course.watched / "a.cpp", fs::file_time_type::clock::now());
  write_file(course.watched / ".a.cpp.swp", "swap");
  write_file(course.watched / "a.cpp~", "backup");
  write_file(course.watched / "#a.cpp#", "autosave");
  write_file(course.watched / "notes.txt", "not a source");
  // The grader says when a save changed nothing; by then it has looked at every file above.
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "no source changed"); }, 60s)) << w.output();
  EXPECT_EQ(course.build_count(), 1);
  EXPECT_EQ(w.rounds(), 1);

  write_file(course.watched / "a.cpp", "int a = 4;\n");
  ASSERT_TRUE(w.wait_rounds(2)) << w.output();
  EXPECT_EQ(course.build_count(), 2);
  EXPECT_TRUE(has(w.last_round(), "a.cpp changed")) << w.last_round();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0);
}

TEST(watch_cli, a_burst_of_saves_is_one_round) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_rounds(1)) << w.output();
  for (int i = 0; i < 5; ++i)
    write_file(course.watched / "a.cpp", "int a = " + std::to_string(10 + i) + ";\n");
  ASSERT_TRUE(w.wait_rounds(2)) << w.output();
  EXPECT_TRUE(has(w.last_round(), ") passes.")) << w.last_round();
  // A second change whose verdict is recognisable (it fails): when it shows, every round
  // the burst caused has been drawn before it.
  write_file(course.watched / "a.cpp", "// BROKEN\n");
  ASSERT_TRUE(w.wait_verdict(false)) << w.output();
  EXPECT_EQ(course.build_count(), 3) << "the burst rebuilt once, the second change once";
  EXPECT_EQ(w.rounds(), 3);
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 1);  // the last verdict failed
}

TEST(watch_cli, new_subfolders_are_watched) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_rounds(1)) << w.output();
  // The file lands at once: the new folder's event alone starts a round, and that round
  // looks at every file below the watched folders, so no file can slip by.
  fs::create_directories(course.watched / "more");
  write_file(course.watched / "more" / "util.hpp", "#pragma once\n");
  ASSERT_TRUE(w.wait_rounds(2)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "util.hpp changed")) << w.last_round();
  write_file(course.watched / "more" / "util.hpp", "#pragma once\nint u;\n");
  ASSERT_TRUE(w.wait_rounds(3)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0);
}

TEST(watch_cli, polls_when_asked) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args({"--poll"}), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  EXPECT_TRUE(has(w.output(), "polling every 300 ms")) << w.output();
  write_file(course.watched / "a.cpp", "// BROKEN\n");
  ASSERT_TRUE(w.wait_verdict(false, 10s)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 1);  // the last verdict failed
}

TEST(watch_cli, keys_hint_list_rerun_next_quit) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "Press n for stage 2, multi-layer-cache.")) << w.last_round();

  w.send("h");
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "Hint 1 of 3 for stage 1"); }, 10s)) << w.output();
  EXPECT_TRUE(has(w.output(), "h the next hint (2 more)")) << w.output();
  w.send("h");  // on the hint page: the next tier
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "Hint 2 of 3 for stage 1"); }, 10s)) << w.output();
  w.send("v");
  w.send("h");  // from the verdict: the tier opened last, not a new one
  ASSERT_TRUE(w.wait_until([&] { return count(w.output(), "Hint 2 of 3 for stage 1") == 2; }, 10s)) << w.output();
  EXPECT_FALSE(has(w.output(), "Hint 3 of 3")) << w.output();
  const int drawn = w.rounds();  // `v` drew the verdict again: one footer more, no build
  EXPECT_EQ(drawn, 2);
  w.send("l");
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "prefix-reuse"); }, 10s)) << w.output();
  w.send("r");
  ASSERT_TRUE(w.wait_rounds(drawn + 1)) << w.output();
  EXPECT_EQ(course.build_count(), 2);
  w.send("n");
  ASSERT_TRUE(w.wait_rounds(drawn + 2)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "Stage 2 · multi-layer-cache")) << w.last_round();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
  EXPECT_FALSE(fs::exists(state / "progress.json")) << "--runner is not the learner's code";
}

// Under an identified mistake, the hint tier that covers it; once `h` has opened it, the
// verdict says it is open.
TEST(watch_cli, an_identified_mistake_offers_its_hint_then_says_it_is_open) {
  FakeCourse course("runner-buggy-kv_swapped");
  TempDir state;
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(w.wait_verdict(false)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "[kvc.kv_swapped]")) << w.last_round();
  EXPECT_TRUE(has(w.last_round(), "hint 2 of 3 (the approach) covers this:")) << w.last_round();
  w.send("h");
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "Hint 1 of 3 for stage 1"); }, 10s))
      << w.output();
  w.send("h");
  ASSERT_TRUE(w.wait_until([&] { return has(w.output(), "Hint 2 of 3 for stage 1"); }, 10s))
      << w.output();
  w.send("v");
  ASSERT_TRUE(w.wait_until(
      [&] { return has(w.output(), "hint 2 of 3 (the approach), already open, covers this"); },
      10s))
      << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 1) << w.output();
}

// `p` writes the last verdict's pictures (grader --report's HTML file), and the footer offers it.
TEST(watch_cli, p_writes_the_pictures_of_the_last_verdict) {
  FakeCourse course;
  TempDir state;
  const fs::path report = state / "pictures.html";
  WatchProcess w(course.args({"--report", report.string()}), state);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  EXPECT_TRUE(has(w.output(), "v verdict · p pictures · r rerun")) << w.output();
  w.send("p");
  ASSERT_TRUE(
      w.wait_until([&] { return has(w.output(), "The pictures of this verdict are in"); }, 10s))
      << w.output();
  ASSERT_TRUE(fs::exists(report)) << w.output();
  const std::string html = read_file(report);
  EXPECT_TRUE(has(html, "Stage 1 · cache-structure")) << html;
  EXPECT_TRUE(has(html, "Every case passes: nothing to draw.")) << html;
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
}

TEST(watch_cli, max_rounds_ends_the_loop) {
  FakeCourse course;
  TempDir state;
  WatchProcess w(course.args({"--max-rounds", "1"}), state);
  EXPECT_EQ(w.wait_exit(60s), 0) << w.output();
  EXPECT_EQ(w.rounds(), 1);
}

TEST(watch_cli, interrupt_leaves_no_child_behind) {
  FakeCourse course;
  TempDir state;
  const fs::path pid_file = course.dir / "build.pid";
  // A rebuild that takes long: its shell and a sleep in its process group.
  // The pid file is written once the sleep runs, so the group is complete when it shows.
  write_file(course.dir / "rebuild.sh",
             "sleep 60 &\necho $$ > '" + pid_file.string() + ".tmp'\nmv '" + pid_file.string() + ".tmp' '" +
                 pid_file.string() + "'\nwait\n");
  WatchProcess w(course.args(), state);
  ASSERT_TRUE(
      w.wait_until([&] { return fs::exists(pid_file) && !read_file(pid_file).empty(); }, 30s))
      << w.output();
  pid_t build_pid = pid_t(std::stol(read_file(pid_file)));
  ::kill(w.pid(), SIGINT);
  EXPECT_EQ(w.wait_exit(), -SIGINT) << w.output();
  // The build's shell, and the sleep in its group, are gone (or zombies awaiting init).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::string stat = read_file("/proc/" + std::to_string(build_pid) + "/stat");
    gone = stat.empty() || has(stat, ") Z ");
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the rebuild (pid " << build_pid << ") outlived Ctrl-C";
  auto r = run("ps -eo pgid=,stat= | awk '$1 == " + std::to_string(build_pid) +
               " && $2 !~ /Z/' | wc -l");
  EXPECT_EQ(std::stoi(r.output), 0) << "processes left in the rebuild's group";
}

TEST(watch_cli, on_a_terminal_keys_need_no_enter_and_the_terminal_is_restored) {
  FakeCourse course;
  TempDir state;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("KVCOURSE_PROGRESS", (state / "progress.json").c_str(), 1);
    ::unsetenv("NO_COLOR");
    std::vector<std::string> all = {bin("grader")};
    for (const std::string& a : course.args()) all.push_back(a);
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string output;
  auto read_until = [&](const std::string& part, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!has(output, part) && std::chrono::steady_clock::now() < deadline) {
      pollfd p{master, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        char buf[4096];
        ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) break;
        output.append(buf, size_t(n));
      }
    }
    return has(output, part);
  };
  ASSERT_TRUE(read_until(kFooter, 60s)) << output;
  EXPECT_TRUE(has(output, "\033[2J")) << "the screen is cleared on a terminal";
  EXPECT_TRUE(has(output, "\033[32m")) << "colour on a terminal";
  termios raw{};
  ASSERT_EQ(::tcgetattr(master, &raw), 0);
  EXPECT_EQ(raw.c_lflag & ICANON, 0u) << "raw mode while watching";

  ASSERT_EQ(::write(master, "q", 1), 1);  // no Enter
  int status = 0;
  for (int i = 0; i < 500 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
    read_until("\x01never", 10ms);
  }
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  termios after{};
  ASSERT_EQ(::tcgetattr(master, &after), 0);
  EXPECT_NE(after.c_lflag & ICANON, 0u) << "the terminal is back in line mode";
  EXPECT_NE(after.c_lflag & ECHO, 0u);
  ::close(master);
}

TEST(watch_cli, usage_errors) {
  FakeCourse course;
  TempDir state;
  auto grader = [&](const std::string& args) {
    return run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " " + bin("grader") + " " +
               args + " </dev/null");
  };
  EXPECT_EQ(grader("--watch --all").exit_code, 2);
  EXPECT_EQ(grader("--watch --stage cache-structure --format json").exit_code, 2);
  auto r = grader("--watch --stage cache-structure --runner " + bin("runner-reference"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.output, "--rebuild-command")) << r.output;
  EXPECT_EQ(
      grader("--watch --stage cache-structure --watch-dir /nonexistent/dir --rebuild-command true")
          .exit_code,
      2);
}

// --- watch mode, real rebuild of the sandbox runner with cmake ---------------------------

namespace {

// The sandbox (tests/grader/CMakeLists.txt): a copy of the reference's sources behind
// runner-watch-sandbox. Tests take turns (a file lock) and leave it as the reference.
class Sandbox {
 public:
  Sandbox() {
    fs::create_directories(dir());
    lock_fd_ = ::open((dir() / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX);
    reset();
  }
  ~Sandbox() {
    reset();
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  static fs::path dir() { return KVCOURSE_WATCH_SANDBOX; }
  static fs::path sources() { return dir() / "src"; }

  // Every sandbox source back to the reference's content (written only where it differs,
  // so an unchanged sandbox needs no rebuild).
  void reset() {
    for (const auto& entry : fs::directory_iterator(sources())) {
      fs::path reference = source_dir() / "reference" / entry.path().filename();
      if (!fs::exists(reference)) continue;
      std::string want = read_file(reference);
      if (read_file(entry.path()) != want) write_file(entry.path(), want);
    }
  }

  std::vector<std::string> args() const {
    // The grader's own rebuild (cmake --build, then the quick path), for another target.
    return {"--stage",          "cache-structure",     "--watch", "--watch-dir", sources().string(),
            "--rebuild-target", "runner-watch-sandbox"};
  }

 private:
  int lock_fd_ = -1;
};

}  // namespace

TEST(watch_cli, real_rebuild_verdict_changes_when_a_learner_file_is_saved) {
  Sandbox sandbox;
  TempDir state;
  const fs::path file = Sandbox::sources() / "kvcache.cpp";
  const std::string good = read_file(file);
  WatchProcess w(sandbox.args(), state);
  ASSERT_TRUE(w.wait_rounds(1, 600s)) << w.output();  // the first build may compile everything
  ASSERT_TRUE(has(w.last_round(), ") passes.")) << w.output();

  // A learner's change that breaks every case: the runner now exits as it starts.
  write_file(file, good +
                       "\n#include <cstdlib>\nnamespace { [[maybe_unused]] const int quits = "
                       "(std::exit(3), 0); }\n");
  ASSERT_TRUE(w.wait_verdict(false)) << w.output();
  EXPECT_TRUE(has(w.last_round(), "kvcache.cpp changed")) << w.last_round();
  EXPECT_TRUE(has(w.last_round(), "exited with status 3")) << w.last_round();

  write_file(file, good);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
}

TEST(watch_cli, real_rebuild_shows_a_compile_error_then_the_fix) {
  Sandbox sandbox;
  TempDir state;
  const fs::path file = Sandbox::sources() / "kvcache.cpp";
  const std::string good = read_file(file);
  WatchProcess w(sandbox.args(), state);
  ASSERT_TRUE(w.wait_rounds(1, 600s)) << w.output();  // the first build may compile everything
  ASSERT_TRUE(has(w.last_round(), ") passes.")) << w.output();

  write_file(file, good + "\nthis is not C++;\n");
  ASSERT_TRUE(w.wait_until([&] { return has(w.last_round(), "does not compile"); }, 120s))
      << w.output();
  std::string round = w.last_round();
  EXPECT_TRUE(has(round, "kvcache.cpp:")) << round;
  EXPECT_TRUE(has(round, "error:")) << round;
  EXPECT_TRUE(has(round, "this is not C++;")) << round;  // the source excerpt
  EXPECT_FALSE(has(round, "make[")) << round;            // the build tool's noise is left out
  EXPECT_FALSE(has(round, "Error 1")) << round;
  EXPECT_FALSE(has(round, "Building CXX")) << round;

  write_file(file, good);
  ASSERT_TRUE(w.wait_verdict(true)) << w.output();
  w.send("q");
  EXPECT_EQ(w.wait_exit(), 0) << w.output();
}

// --- progress ------------------------------------------------------------------------------

namespace {

std::string grader_with_progress(const TempDir& state, const std::string& args) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " +
         bin("grader") + " " + args;
}

}  // namespace

TEST(progress_cli, no_arguments_grade_the_first_stage_not_passed) {
  TempDir state;
  write_file(state / "progress.json", R"({"stages": {"cache-structure": "passed"}})");
  auto r = run(grader_with_progress(state, ""));
  EXPECT_TRUE(has(r.output, "Stage 2 · multi-layer-cache")) << r.output;
  EXPECT_FALSE(has(r.output, "Stage 1 ·")) << r.output;
}

TEST(progress_cli, only_the_learners_own_code_is_recorded) {
  TempDir state;
  run(grader_with_progress(state, "--impl reference --stage cache-structure"));
  run(grader_with_progress(state,
                           "--runner " + bin("runner-reference") + " --stage cache-structure"));
  EXPECT_FALSE(fs::exists(state / "progress.json"));

  run(grader_with_progress(state, "--stage cache-structure"));  // the learner's runner
  std::string saved = read_file(state / "progress.json");
  EXPECT_TRUE(has(saved, "\"cache-structure\"")) << saved;
}

TEST(progress_cli, list_shows_the_progress) {
  TempDir state;
  write_file(state / "progress.json",
             R"({"stages": {"cache-structure": "passed", "multi-layer-cache": "failing"}})");
  auto r = run(grader_with_progress(state, "--list"));
  EXPECT_EQ(r.exit_code, 0);
  std::istringstream lines(r.output);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_TRUE(has(first, "cache-structure") && has(first, "passed")) << r.output;
  EXPECT_TRUE(has(second, "multi-layer-cache") && has(second, "failing") && has(second, "<- next"))
      << r.output;
}

// --- autograder formats --------------------------------------------------------------------

namespace {

nlohmann::json results_file(const fs::path& file) {
  try {
    return nlohmann::json::parse(read_file(file));
  } catch (const std::exception& e) {
    ADD_FAILURE() << file << " is not JSON: " << e.what();
    return nlohmann::json::object();
  }
}

}  // namespace

TEST(autograder_cli, gradescope_results_for_the_reference) {
  TempDir state;
  auto r =
      run(grader_with_progress(state, "--runner " + bin("runner-reference") +
                                          " --stage cache-structure --format gradescope --output " +
                                          (state / "results.json").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = results_file(state / "results.json");
  ASSERT_TRUE(j.contains("tests")) << j;
  EXPECT_GT(j["tests"].size(), 0u);
  double total = 0;
  for (const auto& t : j["tests"]) {
    EXPECT_EQ(t["status"], "passed");
    EXPECT_EQ(t["score"], t["max_score"]);
    total += t["score"].get<double>();
  }
  EXPECT_NEAR(j["score"].get<double>(), total, 1e-9);
  EXPECT_NEAR(total, 10, 1e-9);  // the stage's points in stages/manifest.json
}

TEST(autograder_cli, exercism_results_for_a_failing_runner) {
  TempDir state;
  write_file(state / "failing-runner", "#!/bin/sh\necho about to leave\nexit 3\n");
  fs::permissions(state / "failing-runner", fs::perms::owner_all);
  auto r = run(grader_with_progress(state, "--runner " + (state / "failing-runner").string() +
                                               " --stage multi-layer-cache --format exercism -o " +
                                               (state / "results.json").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  nlohmann::json j = results_file(state / "results.json");
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["status"], "fail");
  ASSERT_GT(j["tests"].size(), 0u) << j;
  for (const auto& t : j["tests"]) {
    EXPECT_EQ(t["status"], "error") << t;  // the runner died: an error, not a wrong answer
    EXPECT_TRUE(has(t["message"], "exited with status 3")) << t;
    EXPECT_TRUE(has(t.value("output", ""), "about to leave")) << t;
  }
}

TEST(autograder_cli, output_that_is_not_utf8_keeps_the_documents_valid) {
  TempDir state;
  for (const char* format : {"gradescope", "exercism"}) {
    const fs::path file = state / (std::string(format) + ".json");
    auto r = run("KVCOURSE_MISBEHAVE=print " +
                 grader_with_progress(state, "--runner " + bin("runner-misbehaving") +
                                                 " --stage cache-structure --format " + format +
                                                 " -o " + file.string()));
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.output;
    EXPECT_TRUE(has(read_file(file), "hello from the learner")) << format;
    results_file(file);  // parses
  }
}

TEST(autograder_cli, environment_errors_still_write_a_results_document) {
  TempDir state;
  const std::string missing = " --runner /nonexistent/runner --stage cache-structure";
  auto e = run(grader_with_progress(
      state, missing + " --format exercism -o " + (state / "e.json").string()));
  EXPECT_EQ(e.exit_code, 2);
  nlohmann::json ej = results_file(state / "e.json");
  EXPECT_EQ(ej["status"], "error");
  EXPECT_TRUE(has(ej["message"], "/nonexistent/runner")) << ej;

  auto g = run(grader_with_progress(
      state, missing + " --format gradescope -o " + (state / "g.json").string()));
  EXPECT_EQ(g.exit_code, 2);
  nlohmann::json gj = results_file(state / "g.json");
  EXPECT_EQ(gj["score"], 0);
  EXPECT_TRUE(has(gj["output"], "/nonexistent/runner")) << gj;

  auto u = run(grader_with_progress(
      state, "--stage no-such-stage --format exercism -o " + (state / "u.json").string()));
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_EQ(results_file(state / "u.json")["status"], "error");
}

TEST(autograder_cli, compile_errors_with_rebuild_are_an_exercism_error) {
  TempDir state;
  write_file(state / "build.sh", "echo \"src/kvcache.cpp:3:1: error: expected ';'\" >&2\nexit 1\n");
  auto r = run(grader_with_progress(
      state, "--rebuild --rebuild-command 'sh " + (state / "build.sh").string() +
                 "' --stage cache-structure --format exercism -o " + (state / "r.json").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;  // the code's fault, not the environment's
  nlohmann::json j = results_file(state / "r.json");
  EXPECT_EQ(j["status"], "error");
  EXPECT_TRUE(has(j["message"], "src/kvcache.cpp:3:1: error: expected ';'")) << j;
}
