// grader: grades the learner's code (or the reference) stage by stage against the
// committed fixtures. Exit status: 0 every case passed, 1 some case failed (or the code
// does not compile, with --rebuild), 2 a usage or environment error (unknown stage,
// broken fixture, runner missing).
//
// `grader` alone grades the first stage not passed yet; `--watch` keeps grading it on
// every save (watch.hpp); `--format gradescope|exercism` writes those platforms' results.
// `--hidden-fixtures DIR` also grades the instructor-only hidden set, and `--random N`
// N fresh cases per stage drawn for this run (fresh_cases.hpp), with the seed reported.
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/formats.hpp"
#include "cli/fresh_cases.hpp"
#include "cli/hints.hpp"
#include "cli/html_report.hpp"
#include "cli/progress.hpp"
#include "cli/report.hpp"
#include "cli/results_file.hpp"
#include "cli/watch.hpp"
#include "sandbox/exposure.hpp"
#include "sandbox/process.hpp"
#include "sandbox/sandbox.hpp"
#include "wire/heap.hpp"

#ifndef KVCOURSE_BINARY_DIR
#define KVCOURSE_BINARY_DIR ""
#endif
#ifndef KVCOURSE_CMAKE_COMMAND
#define KVCOURSE_CMAKE_COMMAND "cmake"
#endif
#ifndef KVCOURSE_GENERATOR
#define KVCOURSE_GENERATOR ""
#endif
#ifndef KVCOURSE_MAKE_PROGRAM
#define KVCOURSE_MAKE_PROGRAM "make"
#endif

namespace fs = std::filesystem;
using namespace course;

namespace {

constexpr int kExitPass = 0, kExitFail = 1, kExitUsage = 2;

// When this run started: a platform's results say how long grading took.
const auto kStarted = std::chrono::steady_clock::now();
double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStarted).count();
}

struct Cli {
  std::string stage_slug, impl = "learner", runner_path, format = "text", output_file, only_case;
  std::string fixtures_dir = (course_root() / "fixtures").string();
  std::string hidden_dir;  // the hidden set (empty: none)
  int random_count = 0;    // fresh cases per stage
  uint64_t seed = 0;
  bool seed_given = false;
  bool all = false, list = false, no_times = false, hint = false;
  double timeout_s = 0;  // --timeout: an explicit CPU budget per case (0: derived per case)
  // The learner's loop.
  bool watch = false, poll = false, rebuild = false, no_rebuild = false;
  std::vector<std::string> watch_dirs;
  std::string build_dir, rebuild_command, rebuild_target;
  int max_rounds = 0;
  std::string sandbox = "auto";
  std::string report_file;  // --report: the HTML pictures of each stage's first failure
  int jobs = 1;             // --jobs: runners at once per stage
};

fs::path exe_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

void on_interrupt(int sig) {
  kill_active_runners();
  stop_active_build();
  restore_terminal();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool use_color(const std::string& format, const std::string& output_file) {
  if (format != "text" || !output_file.empty()) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return ::isatty(STDOUT_FILENO);
}

// What the code under test printed need not be UTF-8: invalid bytes become U+FFFD
// rather than an exception.
std::string dump_json(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The CMake build folder the runners come from: --build-dir, $KVCOURSE_BUILD_DIR, the one
// this grader was built in, or the parent of its bin/.
fs::path build_dir(const Cli& cli) {
  if (!cli.build_dir.empty()) return cli.build_dir;
  if (const char* env = std::getenv("KVCOURSE_BUILD_DIR"); env && *env) return env;
  if (*KVCOURSE_BINARY_DIR) return KVCOURSE_BINARY_DIR;
  return exe_dir().parent_path();
}

// The CMake target that builds the runner under test.
std::string runner_target(const Cli& cli) {
  return cli.rebuild_target.empty() ? "runner-" + cli.impl : cli.rebuild_target;
}

std::string rebuild_command(const Cli& cli) {
  if (!cli.rebuild_command.empty()) return cli.rebuild_command;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  return shell_quote(KVCOURSE_CMAKE_COMMAND) + " --build " + shell_quote(build_dir(cli).string()) +
         " --target " + runner_target(cli) + " --parallel " + std::to_string(jobs);
}

// The folder of a target's build.make below the build folder
// ("tests/grader/CMakeFiles/runner-watch-sandbox.dir"), as the build's own list of targets
// (CMakeFiles/Makefile2) names it: a folder left by an older layout of the tree may still
// hold a build.make that nothing builds any more. "" when the list does not name it.
std::string makefile_target_dir(const fs::path& build, const std::string& target) {
  std::ifstream list(build / "CMakeFiles" / "Makefile2");
  const std::string suffix = "/" + target + ".dir/all:";
  for (std::string line; std::getline(list, line);) {
    const size_t at = line.find(suffix);
    if (at == std::string::npos || line.find(' ') < at) continue;
    const std::string dir = line.substr(0, at + suffix.size() - 5);  // without "/all:"
    std::error_code ec;
    if (fs::exists(build / dir / "build.make", ec)) return dir;
  }
  return "";
}

// After one full rebuild, with the Makefile generator: only the runner's own build.make
// (its objects, then the link), skipping the libraries' checks and CMake's. Empty when
// the generator is another (Ninja is quick as it is) or the command was given.
std::string quick_rebuild_command(const Cli& cli) {
  if (!cli.rebuild_command.empty() || std::string(KVCOURSE_GENERATOR) != "Unix Makefiles")
    return "";
  const fs::path dir = build_dir(cli);
  const std::string target = makefile_target_dir(dir, runner_target(cli));
  if (target.empty()) return "";
  const std::string make =
      shell_quote(KVCOURSE_MAKE_PROGRAM) + " -s -f " + target + "/build.make " + target;
  return "cd " + shell_quote(dir.string()) + " && " + make + "/depend && " + make + "/build";
}

std::vector<fs::path> watch_folders(const Cli& cli) {
  std::vector<fs::path> folders;
  for (const std::string& d : cli.watch_dirs) folders.push_back(fs::absolute(d).lexically_normal());
  if (folders.empty()) {
    const fs::path root = course_root();
    if (cli.impl == "reference")
      folders = {root / "reference"};
    else
      folders = {root / "src", root / "adapters"};
  }
  return folders;
}

// Where results go, and how an error is reported there: on stderr always, and for the
// autograder formats also as a results document, so the platform shows the learner why.
// With --output, the file never holds a partial document: it says "did not finish"
// from the start, and the results replace it in one rename (results_file.hpp).
// What the learner's compile had (--rebuild), from sandbox-compile's report: "" when
// nothing was compiled.
std::string g_compile_sandbox;

// An error document with the compile's isolation, when there was a compile (a document
// that says the code does not compile says where it was compiled, too).
json with_compile_sandbox(json document, bool gradescope) {
  if (g_compile_sandbox.empty()) return document;
  if (gradescope)
    document["extra_data"]["sandbox"]["compile"] = g_compile_sandbox;
  else
    document["sandbox"]["compile"] = g_compile_sandbox;
  return document;
}

class Output {
 public:
  explicit Output(const Cli& cli) : cli_(cli) {}

  bool open() {
    if (cli_.output_file.empty()) return true;
    return write_file(error_document("grading did not finish (the grader was stopped or crashed)"));
  }
  std::ostream& stream() {
    return cli_.output_file.empty() ? static_cast<std::ostream&>(std::cout) : buffer_;
  }

  int error(const std::string& message, int exit_code = kExitUsage) {
    std::cerr << "grader: " << message << "\n";
    if (!cli_.output_file.empty()) {
      write_file(error_document(message));
    } else if (cli_.format == "gradescope" || cli_.format == "exercism") {
      std::cout << error_document(message);
    }
    return exit_code;
  }

  // The code does not compile: for Gradescope a failed "compiles" test, for the others an
  // error. Exit status 1: the code's fault, not the environment's.
  int compile_error(const std::string& compiler_output) {
    if (cli_.format != "gradescope")
      return error("the code does not compile:\n" + compiler_output, kExitFail);
    std::cerr << "grader: the code does not compile:\n" << compiler_output;
    const std::string document =
        dump_json(with_compile_sandbox(
            gradescope_compile_error(compiler_output, seconds_since_start()), true)) +
        "\n";
    if (cli_.output_file.empty())
      std::cout << document;
    else if (!write_file(document))
      return kExitUsage;
    return kExitFail;
  }

  // With --output: the buffered results replace the file. False (with a message) if not.
  bool commit() { return cli_.output_file.empty() || write_file(buffer_.str()); }

 private:
  std::string error_document(const std::string& message) const {
    if (cli_.format == "gradescope")
      return dump_json(
                 with_compile_sandbox(gradescope_error(message, seconds_since_start()), true)) +
             "\n";
    if (cli_.format == "exercism")
      return dump_json(with_compile_sandbox(exercism_error(message), false)) + "\n";
    if (cli_.format == "json")
      return dump_json(with_compile_sandbox(
                 {{"passed", false}, {"error", message}, {"stages", json::array()}}, false)) +
             "\n";
    return "grader: " + message + "\n";
  }

  bool write_file(const std::string& content) {
    const std::string problem = replace_file_atomically(cli_.output_file, content);
    if (!problem.empty()) std::cerr << "grader: " << problem << "\n";
    return problem.empty();
  }

  const Cli& cli_;
  std::ostringstream buffer_;
};

void add_options(CLI::App& app, Cli& cli) {
  app.add_option("--stage,-s", cli.stage_slug, "Grade one stage, by slug (see --list)");
  app.add_flag("--all", cli.all, "Grade every stage");
  app.add_flag("--list", cli.list, "List the stages with your progress");
  app.add_flag("--hint", cli.hint,
               "Print the next tier of the stage's hints (of --stage, or of the first stage not "
               "passed): the idea, then the approach, then near code");
  app.add_option("--impl", cli.impl, "Whose code: learner (src/, adapters/) or reference")
      ->check(CLI::IsMember({"learner", "reference"}));
  app.add_option("--runner", cli.runner_path, "Grade this runner executable instead of --impl's");
  app.add_option("--fixtures", cli.fixtures_dir, "Folder of fixtures, one sub-folder per stage");
  app.add_option(
         "--hidden-fixtures", cli.hidden_dir,
         "Also grade the hidden set in this folder (one sub-folder per stage; instructors and "
         "autograders): the cases are marked hidden and their inputs are never shown")
      ->check(CLI::ExistingDirectory);
  auto* random =
      app.add_option(
             "--random", cli.random_count,
             "Also grade this many fresh cases per stage, drawn now and answered by the reference "
             "(needs make-fixtures: the course authors' repository or an autograder image)")
          ->check(CLI::Range(1, 20));
  app.add_option("--seed", cli.seed,
                 "With --random: the draw's seed (default: from the clock; always reported)")
      ->needs(random);
  app.add_option(
         "--timeout", cli.timeout_s,
         "CPU seconds each case may use, in place of the derived budget (default: 3, plus 0.25 "
         "for each row the reference puts through the model, recorded in the fixture; the wall "
         "clock waits ten times as long)")
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--case", cli.only_case,
      "Grade only this case (of --stage, or of whichever stage has a case of that name)");
  app.add_flag("--no-times", cli.no_times,
               "Leave out the seconds per case and stage (also: KVCOURSE_NO_TIMES=1), for "
               "transcripts that stay the same from run to run");
  app.add_option("--format", cli.format,
                 "Output: text, json, gradescope or exercism (their results.json)")
      ->check(CLI::IsMember({"text", "json", "gradescope", "exercism"}));
  app.add_option("--output,-o", cli.output_file,
                 "Write the results here instead of standard output");

  app.add_option(
      "--report", cli.report_file,
      "Also draw each stage's first failing case in this HTML file: block tables, the "
      "prefix cache, the batch per step, which rows of a tensor differ (in watch mode, p "
      "writes it; default there: .grader/report.html)");
  app.add_flag("--watch,-w", cli.watch,
               "Regrade the stage on every save: rebuild the runner, grade, show the verdict "
               "(keys: n next stage, e next failure, h hint, l list, v verdict, p pictures, r "
               "rerun, q quit)");
  app.add_flag("--poll", cli.poll,
               "With --watch: poll the files every 300 ms instead of using inotify");
  auto* rebuild =
      app.add_flag("--rebuild", cli.rebuild,
                   "Rebuild the runner (incrementally) before grading, as --watch does (without "
                   "it, the runner is rebuilt when a file in src/ or adapters/ is newer)");
  app.add_flag(
         "--no-rebuild", cli.no_rebuild,
         "Never rebuild the runner: refuse to grade one older than a file in src/ or adapters/")
      ->excludes(rebuild);
  app.add_option(
      "--watch-dir", cli.watch_dirs,
      "With --watch: a folder to watch, recursively (repeatable; default src/ and adapters/)");
  app.add_option("--build-dir", cli.build_dir,
                 "The CMake build folder to rebuild the runner in (default: $KVCOURSE_BUILD_DIR, "
                 "or this grader's)");
  app.add_option("--rebuild-target", cli.rebuild_target,
                 "The CMake target of the runner to rebuild and grade (default runner-<impl>)");
  app.add_option("--rebuild-command", cli.rebuild_command,
                 "Shell command that rebuilds the runner (default: cmake --build <build-dir> "
                 "--target runner-<impl>)");
  app.add_option("--sandbox", cli.sandbox,
                 "How the runner is contained: auto (namespaces where the kernel allows them, else "
                 "a uid of its own when the grader is root, else unprotected, said in every "
                 "document), strict (namespaces or the uid mode, or no grading), uid (the uid "
                 "mode even where namespaces work), off (debugging: a plain child)")
      ->check(CLI::IsMember({"auto", "strict", "uid", "off"}));
  app.add_option("--jobs,-j", cli.jobs,
                 "How many runners grade a stage's cases at once (default 1; more than the cores "
                 "this grader may use only costs CPU time). Each case's verdict is the same unless "
                 "the code under "
                 "test keeps state from one case to the next (a global counter), which each runner "
                 "then builds from other cases; the mistakes' records assume one runner")
      ->check(CLI::Range(1, 16));
  app.add_option("--max-rounds", cli.max_rounds,
                 "With --watch: stop after this many verdicts (for scripts)")
      ->check(CLI::PositiveNumber);
}

// The stages that have a case named `name`; none: `error` lists every stage's cases.
std::vector<const Stage*> stages_with_case(const std::string& name, const fs::path& fixtures,
                                           std::string& error) {
  std::vector<const Stage*> found;
  std::string all_cases;
  for (const Stage& s : stage_table()) {
    std::vector<std::string> names;
    try {
      names = case_names(s, fixtures);
    } catch (const FixtureError& e) {
      error = e.what();
      return {};
    }
    std::string list;
    for (const std::string& n : names) {
      list += (list.empty() ? "" : ", ") + n;
      if (n == name) found.push_back(&s);
    }
    all_cases += "\n  " + s.slug + ": " + list;
  }
  if (found.empty()) error = "no stage has a case named \"" + name + "\". The cases:" + all_cases;
  return found;
}

// The stages to grade: --all, --stage, the stages with --case's case, or the first one not
// passed yet.
std::vector<const Stage*> stages_to_grade(const Cli& cli, const Progress& progress,
                                          bool track_progress, std::string& error) {
  std::vector<const Stage*> todo;
  if (!cli.only_case.empty() && cli.stage_slug.empty())
    return stages_with_case(cli.only_case, cli.fixtures_dir, error);
  if (cli.all) {
    if (!cli.stage_slug.empty()) error = "give --stage or --all, not both";
    for (const Stage& s : stage_table()) todo.push_back(&s);
  } else if (!cli.stage_slug.empty()) {
    const Stage* s = find_stage(cli.stage_slug);
    if (!s)
      error = "unknown stage \"" + cli.stage_slug + "\". Stages: " + stage_slugs();
    else
      todo.push_back(s);
  } else {
    const Stage* s = track_progress ? progress.first_unpassed() : Progress{}.first_unpassed();
    if (s) todo.push_back(s);
  }
  return todo;
}

// The uid mode: the answers' files closed to the runners' uids (exposure.hpp), the results
// folder guarded, and the first uid handed to the learner's compile (sandbox-compile). ""
// or why grading cannot be trusted here.
std::string close_answers(const Cli& cli, const sandbox::Isolation& isolation) {
  const std::string uid = std::to_string(isolation.uid);
  ::setenv("KVCOURSE_RUNNER_UID", uid.c_str(), 1);
  ::setenv("KVCOURSE_RUNNER_UID_SHARED", "1", 1);  // held by this grader, lent to the compile
  const fs::path build = exe_dir().parent_path();
  std::vector<fs::path> secrets = {cli.fixtures_dir,
                                   course_root() / "fixtures",
                                   course_root() / "fixtures-hidden",
                                   course_root() / "reference",
                                   course_root() / "tests",
                                   exe_dir(),
                                   build / "grader" / "libcourse_reference.a",
                                   build / "grader" / "CMakeFiles" / "course_reference.dir"};
  if (!cli.hidden_dir.empty()) secrets.push_back(cli.hidden_dir);
  std::vector<std::string> changed;
  std::string problem;
  std::string uids;  // "64998" or "64998, 64997": what the messages name
  for (uint32_t runner_uid : isolation.uids) {
    uids += (uids.empty() ? "" : ", ") + std::to_string(runner_uid);
    if (problem.empty()) problem = sandbox::hide_from_uid(secrets, runner_uid, changed);
    if (problem.empty() && !cli.output_file.empty())
      problem = sandbox::guard_results_folder(fs::absolute(cli.output_file).parent_path(),
                                              runner_uid, changed);
  }
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  for (const std::string& path : changed)
    std::cerr << "grader: uid sandbox: closed to uid " << uids << ": " << path << "\n";
  if (!problem.empty()) return "the uid sandbox cannot hide the answers: " + problem;
  return "";
}

// The isolation runners get (sandbox.hpp), checked against --sandbox: strict refuses to
// grade without the full one, auto warns in one line. The rebuild's compiler launcher
// reads the mode from $KVCOURSE_SANDBOX.
sandbox::Isolation prepare_sandbox(const Cli& cli, GradeOptions& options, std::string& error) {
  sandbox::Mode mode = sandbox::Mode::automatic;
  sandbox::parse_mode(cli.sandbox, mode);
  ::setenv("KVCOURSE_SANDBOX", cli.sandbox.c_str(), 1);
  options.sandbox = {mode, sandbox::limits_for_timeout(cli.timeout_s), {}};
  sandbox::probe(mode);
  // The uid mode gives each runner at once a uid of its own: as many as can be had.
  options.jobs = sandbox::reserve_slots(mode, cli.jobs);
  const sandbox::Isolation isolation = sandbox::probe(mode);
  if ((mode == sandbox::Mode::strict || mode == sandbox::Mode::uid) && !isolation.protects())
    error =
        "--sandbox=" + cli.sandbox +
        ": the runner cannot be isolated here, neither by namespaces nor by a uid of its own (" +
        isolation.missing + ")";
  else if (mode == sandbox::Mode::automatic && !isolation.full())
    std::cerr << "grader: warning: " << isolation.describe() << "\n";
  if (error.empty() && isolation.kind == sandbox::Isolation::Kind::uid)
    error = close_answers(cli, isolation);
  // Without namespaces the runner shares the grader's uid (unless root): keep it from
  // reading this process's memory, which holds the expected answers.
  if (!isolation.namespaces && mode != sandbox::Mode::off) ::prctl(PR_SET_DUMPABLE, 0);
  return isolation;
}

// What a run with --random says of its draw, so that a failure can be replayed.
std::string random_line(const Cli& cli) {
  return "Fresh cases: " + std::to_string(cli.random_count) + " per stage, seed " +
         std::to_string(cli.seed) + " (replay: " + random_replay(cli.random_count, cli.seed) + ")";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The isolation, as the JSON documents carry it.
json sandbox_json(const sandbox::Isolation& isolation) {
  json j = {{"mode", isolation.name()},
            {"protected", isolation.protects()},
            {"full", isolation.full()},
            {"isolation", isolation.describe()}};
  if (!g_compile_sandbox.empty()) j["compile"] = g_compile_sandbox;
  return j;
}

// The isolation line of the text and Gradescope documents, with the compile's.
std::string sandbox_lines(const sandbox::Isolation& isolation) {
  return isolation.describe() + (g_compile_sandbox.empty() ? "" : "\n" + g_compile_sandbox);
}

// The results in the chosen format, with the isolation the runners had.
void write_results(std::ostream& out, const Cli& cli, const std::vector<StageResult>& results,
                   const sandbox::Isolation& isolation) {
  const std::string& format = cli.format;
  if (format == "text") out << sandbox_lines(isolation) << "\n";
  if (format == "text" && cli.random_count > 0) out << random_line(cli) << "\n";
  if (format == "json") {
    json document = results_json(results);
    document["sandbox"] = sandbox_json(isolation);
    if (cli.random_count > 0)
      document["random"] = {{"count", cli.random_count},
                            {"seed", cli.seed},
                            {"replay", random_replay(cli.random_count, cli.seed)}};
    out << dump_json(document) << "\n";
  }
  if (format == "gradescope") {
    json document = gradescope_results(results, seconds_since_start());
    document["output"] = document["output"].get<std::string>() + "\n" + sandbox_lines(isolation) +
                         (cli.random_count > 0 ? "\n" + random_line(cli) : "");
    document["extra_data"] = {{"sandbox", sandbox_json(isolation)}};
    out << dump_json(document) << "\n";
  }
  if (format == "exercism") {
    json document = exercism_results(results);
    // Exercism shows a top-level message only with status "error"; the mode is kept in
    // "sandbox", and an unprotected grade says so where the learner reads it too.
    document["sandbox"] = sandbox_json(isolation);
    if (!isolation.protects()) document["message"] = isolation.describe();
    out << dump_json(document) << "\n";
  }
}

// What a grading run needs beyond the command line.
struct Run {
  GradeOptions options;
  sandbox::Isolation isolation;
  TextStyle style;
  bool explicit_runner = false;
  bool track_progress = false;
  fs::path progress_file;
};

// --watch: its flags checked, then the learner's loop (watch.hpp).
int watch(const Cli& cli, Output& output, const Stage* stage, const Run& run) {
  if (cli.all) return output.error("--watch grades one stage at a time: give --stage, or nothing");
  if (cli.format != "text" || !cli.output_file.empty())
    return output.error("--watch shows its verdicts on the terminal (no --format, no --output)");
  if (run.explicit_runner && cli.rebuild_command.empty() && cli.rebuild_target.empty())
    return output.error(
        "--watch with --runner needs --rebuild-command or --rebuild-target (what rebuilds it)");
  WatchOptions w;
  w.stage = stage;
  w.folders = watch_folders(cli);
  w.display_root = course_root();
  w.rebuild_command = rebuild_command(cli);
  w.quick_rebuild_command = quick_rebuild_command(cli);
  w.grade = run.options;
  w.force_poll = cli.poll;
  w.max_rounds = cli.max_rounds;
  w.track_progress = run.track_progress;
  w.progress_file = run.progress_file;
  w.style = run.style;
  w.clear_screen = ::isatty(STDOUT_FILENO);
  w.report_file = cli.report_file.empty() ? course_root() / ".grader" / "report.html"
                                          : fs::path(cli.report_file);
  w.sandbox = run.isolation.full()                                  ? "sandbox on"
              : run.isolation.kind == sandbox::Isolation::Kind::uid ? "sandbox: uid mode"
              : run.isolation.mode == sandbox::Mode::off            ? "sandbox off"
                                                         : "sandbox degraded, not protected";
  return run_watch(w);
}

// Grades the stages in order, printing each (text) and recording progress. Throws for an
// environment error (a broken fixture, a runner that cannot start).
std::vector<StageResult> grade_stages(const Cli& cli, const std::vector<const Stage*>& todo,
                                      const Run& run, Progress& progress, std::ostream& out) {
  std::vector<StageResult> results;
  for (const Stage* s : todo) {
    results.push_back(grade_stage(*s, run.options));
    if (cli.format == "text") {
      print_stage_text(out, results.back(), run.style);
      if (todo.size() > 1) out << "\n";
    }
    if (run.track_progress && cli.only_case.empty()) {
      const StageResult& r = results.back();
      progress.record(s->slug, r.all_passed(), r.speed ? r.speed->tokens_per_s : 0,
                      r.speed ? r.speed->ratio : 0);
      progress.save(run.progress_file);
    }
  }
  return results;
}

// --hint: opens the stage's next hint tier, remembers it in the progress file and prints it.
int show_hint(const Cli& cli, Output& output, Progress& progress, const fs::path& progress_file) {
  if (cli.all || cli.watch || cli.list || !cli.only_case.empty() || cli.format != "text")
    return output.error(
        "--hint prints one stage's next hint: give --stage, or nothing (no --all, --watch, "
        "--list, --case or --format)");
  const Stage* stage =
      cli.stage_slug.empty() ? progress.first_unpassed() : find_stage(cli.stage_slug);
  if (!stage && !cli.stage_slug.empty())
    return output.error("unknown stage \"" + cli.stage_slug + "\". Stages: " + stage_slugs());
  if (!stage) {
    output.stream() << "Every stage passes. `grader --hint --stage SLUG` shows a stage's hints.\n";
    return output.commit() ? kExitPass : kExitUsage;
  }
  const bool again = progress.hints(*stage) >= int(stage->hints.size());
  const int tier = open_next_hint(progress, *stage);
  if (!again) progress.save(progress_file);
  print_hint(output.stream(), *stage, tier, again);
  return output.commit() ? kExitPass : kExitUsage;
}

// Parses the command line and loads the stage table; -1 to go on, else the exit status.
int parse_command_line(int argc, char** argv, Cli& cli) {
  CLI::App app{
      "Grades the KV-cache course, stage by stage, at atol=0 against the reference's fixtures."};
  add_options(app, cli);
  try {
    app.parse(argc, argv);
    cli.seed_given = app.count("--seed") > 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    stage_table();  // the course's stage list: nothing works without it
  } catch (const CourseError& e) {
    // With --output, the platform still gets a document saying why.
    return Output(cli).error(std::string("the course is broken: ") + e.what());
  }
  return -1;
}

// The rest of `run` from the command line (the runner, fresh cases, the sandbox, the
// style); -1 to go on, else the exit status, the error said.
int prepare_run(Cli& cli, const std::vector<const Stage*>& todo, Output& output, Run& run) {
  run.options.runner = cli.runner_path;
  run.options.fixtures_root = cli.fixtures_dir;
  run.options.explicit_cpu_seconds = cli.timeout_s;
  run.options.weights_dir = build_dir(cli) / "weights";
  run.options.speed_baseline = (exe_dir() / "speed-baseline").string();
  run.options.only_case = cli.only_case;
  run.options.hidden_root = cli.hidden_dir;
  run.options.keep_failed_outputs = !cli.report_file.empty() || cli.watch;
  if (cli.random_count > 0) {
    if (!cli.seed_given) cli.seed = clock_seed();
    run.options.random_replay = random_replay(cli.random_count, cli.seed);
    // Said first, so that even a run that stops early can be replayed.
    std::cerr << "grader: " << random_line(cli) << "\n";
    try {
      run.options.random_cases =
          draw_fresh_cases(exe_dir() / "make-fixtures", cli.random_count, cli.seed, todo);
    } catch (const std::exception& e) {
      return output.error(e.what());
    }
  }
  std::string sandbox_error;
  run.isolation = prepare_sandbox(cli, run.options, sandbox_error);
  if (!sandbox_error.empty()) return output.error(sandbox_error);
  run.style.color = use_color(cli.format, cli.output_file);
  const char* no_times = std::getenv("KVCOURSE_NO_TIMES");
  run.style.times = !cli.no_times && !(no_times && *no_times && std::string(no_times) != "0");
  return -1;
}

// The first learner file (below the watched folders) saved after the runner was built;
// empty when there is none or the runner is missing (starting it will say so).
std::string newer_source(const Cli& cli) {
  std::error_code ec;
  const fs::file_time_type built = fs::last_write_time(cli.runner_path, ec);
  if (ec) return "";
  for (const fs::path& root : watch_folders(cli)) {
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec) || !is_watched_source(it->path())) continue;
      const fs::file_time_type saved = fs::last_write_time(it->path(), file_ec);
      if (!file_ec && saved > built) return it->path().string();
    }
  }
  return "";
}

// --rebuild: builds the runner first; -1 to go on, else the exit status (a compile error
// reported as the format asks).
int rebuild_first(const Cli& cli, Output& output) {
  // Each compile of the learner's code says its isolation in this file (sandbox-compile).
  char report[] = "/tmp/kvcourse-compile-XXXXXX";
  const int fd = ::mkstemp(report);
  if (fd >= 0) {
    ::close(fd);
    ::setenv("KVCOURSE_COMPILE_REPORT", report, 1);
  }
  BuildResult build = run_build(rebuild_command(cli));
  if (fd >= 0) {
    std::istringstream lines(read_text(report));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && g_compile_sandbox.find(line) == std::string::npos)
        g_compile_sandbox += (g_compile_sandbox.empty() ? "" : "; ") + line;
    ::unlink(report);
    ::unsetenv("KVCOURSE_COMPILE_REPORT");
  }
  if (build.ok) return -1;
  std::string errors = trim_compiler_output(build.output, watch_folders(cli));
  if (cli.format != "text") return output.compile_error(errors);
  output.stream() << "The code does not compile. The compiler's first errors:\n\n" << errors;
  return output.commit() ? kExitFail : kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  course::keep_freed_memory();
  Cli cli;
  if (int status = parse_command_line(argc, argv, cli); status >= 0) return status;

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  std::signal(SIGHUP, on_interrupt);

  const bool explicit_runner = !cli.runner_path.empty();
  const bool default_runner = !explicit_runner && cli.rebuild_target.empty();
  if (cli.runner_path.empty()) cli.runner_path = (exe_dir() / runner_target(cli)).string();
  // Progress is the learner's: only verdicts on their own code (src/, adapters/) count.
  const bool track_progress = default_runner && cli.impl == "learner";
  const fs::path progress_file = Progress::default_file();
  Progress progress = Progress::load(progress_file);

  Output output(cli);
  if (!output.open()) return kExitUsage;
  if (cli.hint) return show_hint(cli, output, progress, progress_file);
  if (cli.list) {
    print_stage_list(output.stream(), progress);
    return output.commit() ? kExitPass : kExitUsage;
  }
  std::string usage_error;
  std::vector<const Stage*> todo = stages_to_grade(cli, progress, track_progress, usage_error);
  if (!usage_error.empty()) return output.error(usage_error);
  if (todo.empty() && (cli.format == "text" || cli.watch)) {
    output.stream() << "Every stage passes. `grader --all` grades them again.\n";
    return output.commit() ? kExitPass : kExitUsage;
  }
  // A results document for a platform always says what is true of every stage.
  if (todo.empty())
    for (const Stage& s : stage_table()) todo.push_back(&s);

  Run run;
  run.explicit_runner = explicit_runner;
  run.track_progress = track_progress;
  run.progress_file = progress_file;
  run.style.output_label = cli.impl == "learner" && default_runner ? "[your code]" : "[runner]";
  // Under an identified mistake, the hint tier that covers it; never in a platform's results.
  if (cli.format == "text")
    run.style.hint_offer = [progress](const Diagnosis& d) { return hint_offer(d, progress); };
  if (int status = prepare_run(cli, todo, output, run); status >= 0) return status;

  if (cli.watch) return watch(cli, output, todo.front(), run);
  // Never a verdict on code older than the learner's files: a runner older than one of
  // them is rebuilt first (where the grader knows how: its own runners, or
  // --rebuild-command), or, with --no-rebuild, not graded.
  const bool can_rebuild = default_runner || !cli.rebuild_command.empty();
  if (!cli.rebuild && can_rebuild) {
    if (const std::string newer = newer_source(cli); !newer.empty()) {
      const std::string shown = fs::path(newer).lexically_relative(course_root()).string();
      const std::string file = shown.empty() || shown.rfind("..", 0) == 0 ? newer : shown;
      if (cli.no_rebuild)
        return output.error("the runner " + cli.runner_path + " is older than " + file +
                            ": it would grade the code as it was before that change. Rebuild it (" +
                            rebuild_command(cli) +
                            "), or run without --no-rebuild, which rebuilds it first");
      std::cerr << "grader: " << file << " changed since the runner was built: rebuilding it\n";
      cli.rebuild = true;
    }
  }
  if (cli.rebuild)
    if (int status = rebuild_first(cli, output); status >= 0) return status;

  std::vector<StageResult> results;
  try {
    results = grade_stages(cli, todo, run, progress, output.stream());
  } catch (const std::exception& e) {
    return output.error(e.what());
  }
  // No process of a runner is left to touch the results once they are written.
  sandbox::end_runners(run.isolation);
  write_results(output.stream(), cli, results, run.isolation);
  if (!output.commit()) return kExitUsage;
  if (!cli.report_file.empty()) {
    if (const std::string problem = write_html_report(cli.report_file, results); !problem.empty()) {
      std::cerr << "grader: --report: " << problem << "\n";
      return kExitUsage;
    }
    std::cerr << "grader: the pictures are in " << cli.report_file << " (open it in a browser)\n";
  }

  bool passed = true;
  for (const auto& r : results) passed = passed && r.all_passed();
  return passed ? kExitPass : kExitFail;
}
