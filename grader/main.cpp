// grader: grades the learner's code (or the reference) stage by stage against the
// committed fixtures. Exit status: 0 every case passed, 1 some case failed, 2 a usage or
// environment error (unknown stage, broken fixture, runner missing).
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "process.hpp"
#include "progress.hpp"
#include "report.hpp"

#ifndef KVCOURSE_SOURCE_DIR
#define KVCOURSE_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;
using namespace course;

namespace {

constexpr int kExitPass = 0, kExitFail = 1, kExitUsage = 2;

fs::path exe_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

void on_interrupt(int sig) {
  kill_active_runners();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool use_color(const std::string& format, const std::string& output_file) {
  if (format != "text" || !output_file.empty()) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return ::isatty(STDOUT_FILENO);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Grades the KV-cache course, stage by stage, at atol=0 against the reference's fixtures."};
  std::string stage_slug, impl = "learner", runner_path, format = "text", output_file, only_case;
  std::string fixtures_dir = std::string(KVCOURSE_SOURCE_DIR) + "/fixtures";
  bool all = false, list = false;
  double timeout_s = 5.0;
  app.add_option("--stage,-s", stage_slug, "Grade one stage, by slug (see --list)");
  app.add_flag("--all", all, "Grade every available stage");
  app.add_flag("--list", list, "List the stages with your progress");
  app.add_option("--impl", impl, "Whose code: learner (src/, adapters/) or reference")
      ->check(CLI::IsMember({"learner", "reference"}));
  app.add_option("--runner", runner_path, "Grade this runner executable instead of --impl's");
  app.add_option("--fixtures", fixtures_dir, "Folder of fixtures, one sub-folder per stage");
  app.add_option("--timeout", timeout_s, "Seconds allowed per case")->check(CLI::PositiveNumber);
  app.add_option("--case", only_case, "Grade only this case of the stage");
  app.add_option("--format", format, "Output: text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("--output,-o", output_file, "Write the results here instead of standard output");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);

  const bool default_runner = runner_path.empty();
  if (default_runner) runner_path = (exe_dir() / ("runner-" + impl)).string();
  const bool track_progress = default_runner && impl == "learner";
  const fs::path progress_file = Progress::default_file();
  Progress progress = Progress::load(progress_file);

  if (list) {
    for (const Stage& s : stage_table()) {
      std::string state = s.available ? progress.state(s.slug) : "not available yet";
      std::printf("%d  %-20s %-28s %s\n", s.number, s.slug.c_str(), s.title.c_str(), state.c_str());
    }
    return kExitPass;
  }

  std::vector<const Stage*> todo;
  if (all) {
    if (!stage_slug.empty()) {
      std::cerr << "grader: give --stage or --all, not both\n";
      return kExitUsage;
    }
    for (const Stage& s : stage_table())
      if (s.available) todo.push_back(&s);
  } else if (!stage_slug.empty()) {
    const Stage* s = find_stage(stage_slug);
    if (!s) {
      std::cerr << "grader: unknown stage \"" << stage_slug << "\". Stages: " << stage_slugs() << "\n";
      return kExitUsage;
    }
    if (!s->available) {
      std::cerr << "grader: stage " << s->slug << " is not available yet\n";
      return kExitUsage;
    }
    todo.push_back(s);
  } else {
    // No stage named: the first one not passed yet.
    for (const Stage& s : stage_table()) {
      if (s.available && (!track_progress || progress.state(s.slug) != "passed")) {
        todo.push_back(&s);
        break;
      }
    }
    if (todo.empty()) {
      std::cout << "Every available stage passes. `grader --all` grades them again.\n";
      return kExitPass;
    }
  }

  GradeOptions options;
  options.runner = runner_path;
  options.fixtures_root = fixtures_dir;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  options.only_case = only_case;

  std::ofstream file_out;
  if (!output_file.empty()) {
    file_out.open(output_file);
    if (!file_out) {
      std::cerr << "grader: cannot write " << output_file << "\n";
      return kExitUsage;
    }
  }
  std::ostream& out = output_file.empty() ? std::cout : file_out;
  TextStyle style;
  style.color = use_color(format, output_file);
  style.output_label = impl == "learner" && default_runner ? "[your code]" : "[runner]";

  std::vector<StageResult> results;
  try {
    for (const Stage* s : todo) {
      results.push_back(grade_stage(*s, options));
      if (format == "text") {
        print_stage_text(out, results.back(), style);
        if (todo.size() > 1) out << "\n";
      }
      if (track_progress && only_case.empty()) {
        progress.status[s->slug] = results.back().all_passed() ? "passed" : "failing";
        progress.save(progress_file);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "grader: " << e.what() << "\n";
    return kExitUsage;
  }
  if (format == "json") out << results_json(results).dump(2) << "\n";

  bool passed = true;
  for (const auto& r : results) passed = passed && r.all_passed();
  return passed ? kExitPass : kExitFail;
}
