#include "cli/watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/hints.hpp"
#include "cli/html_report.hpp"
#include "cli/progress.hpp"
#include "cli/view.hpp"
#include "sandbox/process.hpp"
#include "wire/tensor.hpp"

namespace course {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------
// Which files count, and what they hold.

bool is_watched_source(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.empty() || name[0] == '.' || name[0] == '#')
    return false;                                              // .#lock, #autosave#, .hidden
  if (name.back() == '~' || name.back() == '#') return false;  // backups
  static const char* const extensions[] = {".cpp", ".cc", ".cxx", ".hpp", ".hh",
                                           ".hxx", ".h",  ".ipp", ".inl"};
  const std::string ext = file.extension().string();
  for (const char* e : extensions)
    if (ext == e) return true;
  return false;  // 4913, *.swp, *.tmp, ...
}

namespace {

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// What a stage's cases are loaded from, as a key: the stage, the case asked for, and each
// fixture file's name, size and time of change. "" when a folder cannot be read (then
// nothing is reused, and the loading says what is wrong).
std::string fixtures_key(const Stage& stage, const GradeOptions& options) {
  std::string key = stage.slug + '\n' + options.only_case + '\n';
  for (const fs::path& root : {options.fixtures_root, options.hidden_root}) {
    if (root.empty()) continue;
    std::error_code ec;
    std::vector<std::string> entries;
    for (fs::directory_iterator it(root / stage.slug, ec), end; !ec && it != end; it.increment(ec)) {
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0) return "";
      entries.push_back(it->path().string() + ' ' + std::to_string(st.st_size) + ' ' +
                        std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec) + ' ' +
                        std::to_string(st.st_ino));
    }
    if (ec) return "";
    std::sort(entries.begin(), entries.end());
    for (const std::string& e : entries) key += e + '\n';
  }
  return key;
}

bool read_whole(const fs::path& file, std::string& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

}  // namespace

SourceSnapshot snapshot_sources(const std::vector<fs::path>& folders) {
  SourceSnapshot snap;
  for (const fs::path& root : folders) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
        end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (!it->is_regular_file(type_ec) || !is_watched_source(it->path())) continue;
      std::string bytes;
      if (read_whole(it->path(), bytes))
        snap[it->path().string()] = fnv1a(bytes);  // gone meanwhile: skip
    }
  }
  return snap;
}

std::vector<std::string> changed_files(const SourceSnapshot& before, const SourceSnapshot& after) {
  std::vector<std::string> out;
  for (const auto& [path, hash] : after) {
    auto it = before.find(path);
    if (it == before.end() || it->second != hash) out.push_back(path);
  }
  for (const auto& [path, hash] : before)
    if (!after.count(path)) out.push_back(path);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// The compiler's errors, trimmed to the learner's files.

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool is_build_tool_noise(const std::string& line) {
  return line.rfind("make", 0) == 0 || line.rfind("gmake", 0) == 0 || line.rfind("ninja", 0) == 0 ||
         line.rfind("[", 0) == 0 || line.rfind("collect2", 0) == 0 || line.rfind("FAILED:", 0) == 0;
}

}  // namespace

std::string trim_compiler_output(const std::string& output, const std::vector<fs::path>& folders,
                                 int max_errors, size_t max_lines) {
  std::vector<std::string> prefixes;
  for (const fs::path& f : folders) {
    std::string p = f.lexically_normal().string();
    if (!p.empty() && p.back() != '/') p += '/';
    prefixes.push_back(p);
  }
  auto names_learner_file = [&](const std::string& line) {
    for (const std::string& p : prefixes)
      if (contains(line, p)) return true;
    return false;
  };

  const std::vector<std::string> lines = split_lines(output);
  std::vector<std::string> kept;
  int errors = 0;
  bool any_error = false;
  for (size_t i = 0; i < lines.size() && kept.size() < max_lines; ++i) {
    const std::string& line = lines[i];
    if (!names_learner_file(line) || contains(line, ": warning:")) continue;
    const bool is_error = contains(line, ": error:") || contains(line, ": fatal error:");
    if (is_error && ++errors > max_errors) break;
    any_error = any_error || is_error;
    kept.push_back(line);
    // The source excerpt and caret the compiler prints under a message are indented.
    for (size_t j = i + 1;
         j < lines.size() && j <= i + 3 && !lines[j].empty() && lines[j][0] == ' '; ++j) {
      kept.push_back(lines[j]);
      i = j;
    }
  }
  if (!any_error) {
    // Nothing names the learner's files with an error (a link error, a broken build
    // setup): show the lines that say "error" instead.
    for (const std::string& line : lines) {
      if (kept.size() >= max_lines) break;
      if (is_build_tool_noise(line)) continue;
      if (contains(line, "error") || contains(line, "undefined reference") ||
          contains(line, "multiple definition"))
        kept.push_back(line);
    }
  }
  if (kept.empty()) {
    // Say something rather than nothing: the last lines of the build.
    size_t from = lines.size() > 10 ? lines.size() - 10 : 0;
    kept.assign(lines.begin() + long(from), lines.end());
  }
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------
// The rebuild, a child process group that a signal handler can stop.

namespace {

std::atomic<pid_t> g_build_group{0};

// The terminal's settings before raw mode, for restore_terminal().
struct termios g_saved_termios;
std::atomic<bool> g_termios_saved{false};

}  // namespace

void stop_active_build() {
  pid_t g = g_build_group.load();
  if (g > 0) ::kill(-g, SIGTERM);  // make removes a half-written object file on SIGTERM
}

void restore_terminal() {
  if (g_termios_saved.load()) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved_termios);
}

BuildResult run_build(const std::string& shell_command) {
  BuildResult result;
  const auto t0 = clock_type::now();
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    result.output = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    result.output = std::string("cannot fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  g_build_group.store(pid);
  ::close(out[1]);
  char buf[8192];
  while (true) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n > 0) {
      if (result.output.size() < (4u << 20)) result.output.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGTERM);  // nothing of the build outlives it
  g_build_group.store(0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.ok = result.exit_code == 0;
  result.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return result;
}

// ---------------------------------------------------------------------------------------
// Noticing changes: inotify on every folder below the roots, or polling.

namespace {

class ChangeWatcher {
 public:
  ChangeWatcher(std::vector<fs::path> roots, bool force_poll) : roots_(std::move(roots)) {
    if (force_poll) {
      why_polling_ = "--poll";
      return;
    }
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) {
      why_polling_ = std::string("inotify is unavailable: ") + std::strerror(errno);
      return;
    }
    rewatch();
  }
  ~ChangeWatcher() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChangeWatcher(const ChangeWatcher&) = delete;
  ChangeWatcher& operator=(const ChangeWatcher&) = delete;

  bool polling() const { return fd_ < 0; }
  int fd() const { return fd_; }
  std::string how() const {
    return polling() ? "polling every 300 ms: " + why_polling_ : "inotify";
  }

  // Watches every folder below the roots, including ones created since the last call
  // (adding a watch twice is harmless). Falls back to polling when the kernel refuses.
  void rewatch() {
    if (fd_ < 0) return;
    const uint32_t mask = IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                          IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
    for (const fs::path& root : roots_) {
      std::error_code ec;
      if (!fs::is_directory(root, ec)) continue;
      std::vector<fs::path> dirs{root};
      for (fs::recursive_directory_iterator
               it(root, fs::directory_options::skip_permission_denied, ec),
           end;
           !ec && it != end; it.increment(ec)) {
        std::error_code type_ec;
        if (it->is_directory(type_ec)) dirs.push_back(it->path());
      }
      for (const fs::path& d : dirs) {
        if (::inotify_add_watch(fd_, d.c_str(), mask) < 0 && errno != ENOENT) {
          why_polling_ = "cannot watch " + d.string() + " (" + std::strerror(errno) +
                         "; the limit is /proc/sys/fs/inotify/max_user_watches)";
          ::close(fd_);
          fd_ = -1;
          return;
        }
      }
    }
  }

  // Reads what the kernel queued. True when something happened to a watched source or a
  // folder (a new folder gets its watch here); editor droppings are ignored.
  bool drain() {
    bool relevant = false, new_folder = false;
    alignas(inotify_event) char buf[16384];
    while (fd_ >= 0) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (char* p = buf; p < buf + n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(p);
        p += sizeof(inotify_event) + ev->len;
        if (ev->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF)) {
          relevant = true;
          continue;
        }
        if (ev->mask & IN_ISDIR) {
          relevant = true;
          new_folder = new_folder || (ev->mask & (IN_CREATE | IN_MOVED_TO));
          continue;
        }
        if (ev->len > 0 && is_watched_source(ev->name)) relevant = true;
      }
    }
    if (new_folder) rewatch();
    return relevant;
  }

 private:
  std::vector<fs::path> roots_;
  int fd_ = -1;
  std::string why_polling_;
};

// Keys: the terminal in raw mode (no line editing, no echo; Ctrl-C still signals), or
// plain characters from standard input when it is not a terminal.
class KeyInput {
 public:
  KeyInput() {
    if (::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &g_saved_termios) == 0) {
      struct termios raw = g_saved_termios;
      raw.c_lflag &= ~tcflag_t(ICANON | ECHO);
      raw.c_cc[VMIN] = 1;
      raw.c_cc[VTIME] = 0;
      g_termios_saved.store(true);
      ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
  }
  ~KeyInput() {
    restore_terminal();
    g_termios_saved.store(false);
  }
  KeyInput(const KeyInput&) = delete;
  KeyInput& operator=(const KeyInput&) = delete;

  bool open() const { return open_; }
  std::string read_keys() {
    char buf[64];
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0) return std::string(buf, size_t(n));
    if (n == 0 || (errno != EINTR && errno != EAGAIN))
      open_ = false;  // end of input: keep watching
    return "";
  }

 private:
  bool open_ = true;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// One watch session: the stage on screen, what was last built, and the verdicts.
class Session {
 public:
  enum class View { verdict, hint, list };

  explicit Session(const WatchOptions& o, const std::string& how)
      : o_(o), stage_(o.stage), how_(how) {
    // The hint offered under an identified mistake counts the tiers open now, from the
    // same place `h` keeps them.
    verdict_style_.hint_offer = [this](const Diagnosis& d) {
      return hint_offer(d, o_.track_progress ? Progress::load(o_.progress_file) : session_hints_);
    };
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool done() const { return done_; }
  int exit_code() const { return exit_code_; }
  const SourceSnapshot& graded() const { return graded_; }

  // Rebuilds the runner and grades the stage; `why` says what started the round. The
  // quick rebuild is used once a full one has succeeded, unless `full` asks otherwise.
  void round(const std::string& why, bool full = false) {
    // Taken before the build: a save during the build starts another round.
    graded_ = snapshot_sources(o_.folders);
    std::cout << "\n" << why << " · rebuilding…" << std::endl;
    bool quick = !full && full_build_done_ && !o_.quick_rebuild_command.empty();
    BuildResult build = run_build(quick ? o_.quick_rebuild_command : o_.rebuild_command);
    if (quick && !build.ok && !names_any_folder(build.output)) {
      // Not the learner's code (a library gone, the build folder cleaned): the full build.
      quick = false;
      build = run_build(o_.rebuild_command);
    }
    if (build.ok && !quick) full_build_done_ = true;
    if (!build.ok) {
      show_compile_error(build);
    } else {
      grade(build.seconds);
    }
    ++rounds_;
    if (o_.max_rounds > 0 && rounds_ >= o_.max_rounds) done_ = true;
  }

  void on_key(char key) {
    switch (key) {
      case 'q':
        done_ = true;
        break;
      case 'r':
        round("Rerun", true);
        break;
      case 'n':
        next_stage();
        break;
      case 'h':
        open_hint();
        break;
      case 'l':
        show(view_ == View::list ? View::verdict : View::list);
        break;
      case 'v':
        show(View::verdict);
        break;
      case 'e':
        ++focus_;
        show(View::verdict);
        break;
      case 'p':
        write_pictures();
        break;
      default:
        break;
    }
  }

  // `p`: the last verdict's failing case drawn in an HTML file (html_report.hpp).
  void write_pictures() {
    if (!last_result_) {
      note("No verdict to draw yet (the code does not build).");
      return;
    }
    std::error_code error;
    std::filesystem::create_directories(o_.report_file.parent_path(), error);
    const std::string problem = write_html_report(o_.report_file, {*last_result_});
    note(problem.empty() ? "The pictures of this verdict are in " +
                               shown_path(o_.report_file.string()) + ": open it in a browser."
                         : "Could not write the pictures: " + problem);
  }

  // A short status for the learner (a save that changed nothing): on a terminal it goes
  // into the frame's footer; otherwise it is printed as one line.
  void note(const std::string& text) {
    if (!o_.clear_screen) {
      std::cout << text << std::endl;
      return;
    }
    status_ = text;
    show(view_);
    status_.clear();
  }

  std::string describe(const std::vector<std::string>& files) const {
    std::string text;
    for (size_t i = 0; i < files.size() && i < 3; ++i)
      text += (i ? ", " : "") + shown_path(files[i]);
    if (files.size() > 3) text += " and " + std::to_string(files.size() - 3) + " more";
    return text + " changed";
  }

 private:
  bool names_any_folder(const std::string& text) const {
    for (const fs::path& f : o_.folders)
      if (text.find(f.lexically_normal().string() + "/") != std::string::npos) return true;
    return false;
  }

  void clear() {
    if (o_.clear_screen) std::cout << "\033[H\033[2J\033[3J";
  }

  std::string shown_path(const std::string& path) const {
    if (o_.display_root.empty()) return path;
    std::string root = o_.display_root.lexically_normal().string();
    if (!root.empty() && root.back() != '/') root += '/';
    std::string out = path;
    for (size_t at; (at = out.find(root)) != std::string::npos;) out.erase(at, root.size());
    return out;
  }

  std::string paint(const char* code, const std::string& text) const {
    return o_.style.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }

  void grade(double build_seconds) {
    GradeOptions options = o_.grade;
    // The verdict streams: from the first failing case on, each case is drawn as it is
    // known (a frame without the keys' line: it is not a round's verdict yet).
    bool failing = false;
    options.on_case = [&](const StageResult& so_far) {
      failing = failing || so_far.cases.back().status != CaseStatus::passed;
      if (!failing) return;
      last_result_ = so_far;
      focus_ = 0;
      footer_ = {"Rebuilt in " + seconds_text(build_seconds) + "; grading the remaining cases…"};
      show(View::verdict);
    };
    StageResult result;
    try {
      // A save changes the learner's code, not the fixtures: the cases loaded for the last
      // round serve again unless a fixture file changed (loading them was a third of
      // stage paged-cache's grading).
      const auto t0 = clock_type::now();
      const std::string key = fixtures_key(*stage_, options);
      if (key.empty() || key != cases_key_) {
        cases_key_.clear();
        cases_ = stage_cases(*stage_, options);
        cases_key_ = key;
      }
      result = grade_cases(*stage_, cases_, options);
      result.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    } catch (const std::exception& e) {
      verdict_lines_ = {"Stage " + std::to_string(stage_->number) + " · " + stage_->slug,
                        paint("31", std::string("The grader could not run this stage: ") + e.what())};
      exit_code_ = 2;
      footer_ = footer(build_seconds, -1);
      last_result_.reset();
      show(View::verdict);
      return;
    }
    const bool passed = result.all_passed();
    exit_code_ = passed ? 0 : 1;
    if (o_.track_progress) {
      Progress progress = Progress::load(o_.progress_file);
      progress.record(stage_->slug, passed, result.speed ? result.speed->tokens_per_s : 0,
                      result.speed ? result.speed->ratio : 0);
      progress.save(o_.progress_file);
    }
    footer_ = footer(build_seconds, result.seconds);
    if (passed) {
      const Stage* next = next_stage_after(stage_);
      std::string line = paint("1;32", "Stage " + std::to_string(stage_->number) + " (" + stage_->slug + ") passes.");
      line += next ? " Press n for stage " + std::to_string(next->number) + ", " + next->slug + "."
                   : std::string(" That was the last stage.");
      footer_.insert(footer_.begin(), line);
    }
    last_result_ = std::move(result);
    focus_ = 0;
    show(View::verdict);
  }

  void show_compile_error(const BuildResult& build) {
    verdict_lines_ = {"Stage " + std::to_string(stage_->number) + " · " + stage_->slug + " · " + stage_->title,
                      paint("1;31", "Your code does not compile.") + " The compiler's first errors:", ""};
    std::istringstream errors(shown_path(trim_compiler_output(build.output, o_.folders)));
    for (std::string line; std::getline(errors, line);) verdict_lines_.push_back("  " + line);
    verdict_lines_.push_back("");
    verdict_lines_.push_back("(all of the build's output: " + o_.rebuild_command + ")");
    exit_code_ = 1;
    footer_ = footer(build.seconds, -1);
    last_result_.reset();
    show(View::verdict);
  }

  std::vector<std::string> footer(double build_seconds, double grade_seconds) const {
    std::string folders;
    for (const fs::path& f : o_.folders)
      folders += (folders.empty() ? "" : ", ") + shown_path(f.string() + "/");
    std::string line = "Watching " + folders + " (" + how_ + "). Rebuilt in " + seconds_text(build_seconds);
    if (grade_seconds >= 0) line += ", graded in " + seconds_text(grade_seconds);
    if (grade_seconds >= 0 && !o_.sandbox.empty()) line += " (" + o_.sandbox + ")";
    return {line + ".", paint("2",
                              "Keys: n next stage · e next failure · h hint · l list · v verdict · "
                              "p pictures · r rerun · q quit")};
  }

  // Draws one whole frame: the screen is cleared first, and the frame fits it.
  void show(View view) {
    view_ = view;
    const Screen screen = terminal_screen();
    std::vector<std::string> frame;
    if (view == View::hint) {
      frame = page_frame(paint("33", hint_title(*stage_, hint_tier_)), hint_body(*stage_, hint_tier_), screen,
                         {paint("2", hint_keys())});
    } else if (view == View::list) {
      std::ostringstream list;
      print_stage_list(list, Progress::load(o_.progress_file));
      std::istringstream text(list.str());
      std::vector<std::string> lines;
      for (std::string line; std::getline(text, line);) lines.push_back(line);
      frame = page_frame("The stages, with your progress", lines, screen,
                         {paint("2", "Keys: l or v back to the verdict · n next stage · r rerun · q quit")});
    } else {
      std::vector<std::string> footer = footer_;
      if (!status_.empty()) footer.insert(footer.begin(), status_);
      if (last_result_) {
        frame = verdict_frame(*last_result_, verdict_style_, screen, focus_, footer);
      } else {
        std::vector<Section> sections = {{verdict_lines_, 1}, {footer, 0}};
        frame = fit_frame(sections, screen);
      }
    }
    clear();
    for (const std::string& line : frame) std::cout << line << "\n";
    std::cout << std::flush;
  }

  // `h`: from another page, the hint tier opened last (tier 1 the first time); on the
  // hint page, the next tier. Opened tiers are kept with the progress when it is the
  // learner's own code, else for this session only.
  void open_hint() {
    Progress progress = o_.track_progress ? Progress::load(o_.progress_file) : session_hints_;
    const int opened = progress.hints(*stage_);
    const int total = int(stage_->hints.size());
    hint_tier_ = view_ == View::hint ? std::min(hint_tier_ + 1, total) : std::max(opened, 1);
    if (hint_tier_ > opened) {
      progress.hints_opened[stage_->slug] = hint_tier_;
      if (o_.track_progress) progress.save(o_.progress_file);
      session_hints_.hints_opened[stage_->slug] = hint_tier_;
    }
    show(View::hint);
  }

  std::string hint_keys() const {
    const int left = int(stage_->hints.size()) - hint_tier_;
    const std::string more = left > 0 ? "h the next hint (" + std::to_string(left) + " more) · "
                                      : std::string("(that was the last hint) ");
    return "Keys: " + more + "v back to the verdict · l list · n next stage · r rerun · q quit";
  }

  static const Stage* next_stage_after(const Stage* s) {
    const auto& table = stage_table();
    for (size_t i = 0; i + 1 < table.size(); ++i)
      if (&table[i] == s) return &table[i + 1];
    return nullptr;
  }

  void next_stage() {
    const Stage* next = next_stage_after(stage_);
    if (!next) {
      std::cout << "\nStage " << stage_->number << " is the last stage." << std::endl;
      return;
    }
    stage_ = next;
    round("Stage " + std::to_string(stage_->number) + ", " + stage_->slug);
  }

  const WatchOptions& o_;
  TextStyle verdict_style_ = o_.style;  // o_.style, with the hint offer of this session
  const Stage* stage_;
  View view_ = View::verdict;
  int hint_tier_ = 1;        // the tier on the hint page
  Progress session_hints_;   // tiers opened, when they are not kept in the progress file
  std::optional<StageResult> last_result_;   // the last grading, when the code built
  std::vector<std::string> verdict_lines_;   // otherwise: the compile error or grader error
  std::vector<std::string> footer_;
  int focus_ = 0;                            // which failing case is shown in full
  std::string status_;                       // a note shown once in the footer
  std::string how_;
  SourceSnapshot graded_;
  StageCases cases_;       // the cases of the last round's stage
  std::string cases_key_;  // what they were loaded from (fixtures_key); "" when not kept
  int rounds_ = 0;
  bool full_build_done_ = false;
  int exit_code_ = 1;
  bool done_ = false;
};

int ms_until(clock_type::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock_type::now()).count();
  return ms < 0 ? 0 : int(ms) + 1;
}

}  // namespace

int run_watch(const WatchOptions& o) {
  bool any_folder = false;
  for (const fs::path& f : o.folders) {
    std::error_code ec;
    any_folder = any_folder || fs::is_directory(f, ec);
  }
  if (!any_folder || !o.stage) {
    std::cerr << "grader: nothing to watch (no folder of --watch-dir exists)\n";
    return 2;
  }
  ChangeWatcher watcher(o.folders,
                        o.force_poll);  // watching before the first build: no save is missed
  KeyInput keys;
  Session session(o, watcher.how());
  if (watcher.polling())
    std::cout << "Watching by polling every 300 ms (" << watcher.how() << ")." << std::endl;
  session.round("Starting");

  bool pending = false;
  auto settle_at = clock_type::now();
  auto next_poll = clock_type::now() + o.poll_interval;
  while (!session.done()) {
    pollfd fds[2];
    nfds_t n = 0;
    int inotify_index = -1, key_index = -1;
    if (watcher.fd() >= 0) {
      inotify_index = int(n);
      fds[n++] = {watcher.fd(), POLLIN, 0};
    }
    if (keys.open()) {
      key_index = int(n);
      fds[n++] = {STDIN_FILENO, POLLIN, 0};
    }
    int timeout = -1;
    if (pending) timeout = ms_until(settle_at);
    if (watcher.polling())
      timeout = timeout < 0 ? ms_until(next_poll) : std::min(timeout, ms_until(next_poll));
    int rc = ::poll(fds, n, timeout);
    if (rc < 0 && errno != EINTR) break;
    const auto now = clock_type::now();
    if (rc > 0 && inotify_index >= 0 && (fds[inotify_index].revents & POLLIN) && watcher.drain()) {
      pending = true;
      settle_at = now + o.settle;  // each event restarts the quiet period
    }
    if (rc > 0 && key_index >= 0 && (fds[key_index].revents & (POLLIN | POLLHUP))) {
      for (char key : keys.read_keys()) {
        session.on_key(key);
        if (session.done()) break;
      }
      if (session.done()) break;
    }
    if (watcher.polling() && now >= next_poll) {
      next_poll = now + o.poll_interval;
      if (!pending && snapshot_sources(o.folders) != session.graded()) {
        pending = true;
        settle_at = now + o.settle;
      }
    }
    if (pending && clock_type::now() >= settle_at) {
      pending = false;
      watcher.rewatch();
      SourceSnapshot now_snapshot = snapshot_sources(o.folders);
      std::vector<std::string> changed = changed_files(session.graded(), now_snapshot);
      if (!changed.empty())
        session.round(session.describe(changed));
      else
        session.note("Saved, but no source changed since the last build: nothing to do.");
    }
  }
  return session.exit_code();
}

}  // namespace course
