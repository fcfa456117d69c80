// Hostile submissions against the grader's sandbox (grader/SANDBOX.md). Each test runs the
// real grader on runner-hostile (hostile_runner.cpp) with one attack and checks what a
// course must be able to promise: no case passes that did not compute its answer, the
// results file is complete and truthful, no process of the submission outlives the
// grader, and no file of the course changes. Where it shows that an attack is real, a
// control run with --sandbox=off lets the same attack succeed.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "test_support.hpp"

using json = nlohmann::json;
using testing_support::run;
using testing_support::TempDir;
namespace fs = std::filesystem;

namespace {

// How many cases the hostile runs grade: every case of stage cache-structure.
int stage_cases() {
  static const int n = [] {
    int count = 0;
    for (const auto& e :
         fs::directory_iterator(testing_support::source_dir() / "fixtures" / "cache-structure"))
      count += e.path().extension() == ".json" || e.path().extension() == ".gz";
    return count;
  }();
  return n;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A digest of every file below the course's folders that a submission must not change.
std::string course_fingerprint() {
  std::string digest;
  for (const char* folder : {"fixtures", "src", "adapters", "reference", "include", "grader"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(testing_support::source_dir() / folder))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::uint64_t h = 1469598103934665603ull;
      for (unsigned char c : testing_support::read_file(f)) h = (h ^ c) * 1099511628211ull;
      digest += f.string() + ":" + std::to_string(h) + "\n";
    }
  }
  return digest;
}

struct Graded {
  int exit_code = -1;
  std::string output;        // the grader's stdout and stderr
  std::string results_text;  // the --output file
  json results;              // parsed; null when not JSON
  std::vector<int> leftovers;

  const json& cases() const {
    static const json none = json::array();
    const json* stages =
        results.is_object() && results.contains("stages") ? &results["stages"] : nullptr;
    return stages && stages->is_array() && !stages->empty() ? (*stages)[0]["cases"] : none;
  }
  int passed() const {
    int n = 0;
    for (const json& c : cases()) n += c["status"] == "passed";
    return n;
  }
  std::string case_text(int i) const {
    return cases()[i]["status"].get<std::string>() + ": " +
           cases()[i]["message"].get<std::string>() + "\n" +
           cases()[i]["output"].get<std::string>();
  }
};

// "" (namespaces) or the no-namespaces wrapper (the uid mode, as in a container): set by
// the test's parameter.
std::string g_wrapper;

// Denied by the sandbox: not there (namespaces) or not readable or writable (the uid mode).
bool denied(const std::string& text) {
  return contains(text, "No such file or directory") || contains(text, "Permission denied");
}

// Grades stage cache-structure with runner-hostile doing `mode`; `env` adds variables.
Graded grade(const std::string& mode, const TempDir& dir, const std::string& args = "",
             const std::string& env = "") {
  const std::string mark = "KVCOURSE_HOSTILE_MARK=" + testing_support::unique_token();
  const fs::path results = dir / "results.json";
  const std::string command =
      env + " " + mark + " KVCOURSE_HOSTILE=" + mode +
      " KVCOURSE_HOSTILE_FIXTURES=" + (testing_support::source_dir() / "fixtures").string() +
      " KVCOURSE_PROGRESS=" + (dir / "progress.json").string() + " NO_COLOR=1 " + g_wrapper +
      testing_support::bin("grader") + " --runner " + testing_support::bin("runner-hostile") +
      " --stage cache-structure --format json -o " + results.string() + " " + args;
  Graded g;
  auto r = run(command);
  g.exit_code = r.exit_code;
  g.output = r.output;
  g.leftovers = testing_support::processes_with_environment(mark);
  for (int pid : g.leftovers) ::kill(pid, SIGKILL);  // a failed test leaves nothing running either
  g.results_text = testing_support::read_file(results);
  g.results = json::parse(g.results_text, nullptr, false);
  return g;
}

// What every hostile run must give: a complete results document, truthful about the
// cases, and nothing of the submission still running.
void expect_clean(const Graded& g, int cases = stage_cases()) {
  ASSERT_FALSE(g.results.is_discarded()) << "results are not JSON:\n"
                                         << g.results_text << "\n"
                                         << g.output;
  ASSERT_TRUE(g.results.contains("stages")) << g.results_text;
  ASSERT_EQ(g.cases().size(), size_t(cases)) << g.results_text;
  EXPECT_EQ(g.results["passed"], g.passed() == cases);
  EXPECT_EQ(g.exit_code, g.passed() == cases ? 0 : 1) << g.output;
  EXPECT_EQ(g.leftovers, std::vector<int>{}) << "processes of the submission outlived the grader";
}

// Every attack in both modes: the namespaces, and the uid mode (as root where namespaces
// are refused, as in Docker).
class hostile : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    g_wrapper = GetParam() == "uid" ? testing_support::bin("no-namespaces") + " " : "";
    before_ = course_fingerprint();
  }
  bool uid_mode() const { return GetParam() == "uid"; }
  void TearDown() override {
    EXPECT_EQ(course_fingerprint(), before_) << "a file of the course changed";
  }
  TempDir dir_;

 private:
  std::string before_;
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(modes, hostile, ::testing::Values("namespaces", "uid"));

TEST_P(hostile, copying_the_fixtures_answers_passes_no_case) {
  Graded g = grade("steal", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), 0) << g.results_text;
  EXPECT_TRUE(contains(g.case_text(1), "could not read")) << g.case_text(1);
  EXPECT_TRUE(denied(g.case_text(1))) << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "fixtures-hidden: ")) << g.case_text(1);
  EXPECT_FALSE(contains(g.case_text(1), "fixtures-hidden: READ")) << g.case_text(1);
  EXPECT_EQ(g.results["sandbox"]["mode"], GetParam()) << g.results_text;
  EXPECT_TRUE(contains(g.case_text(1), "reference/decode.cpp: ")) << g.case_text(1);
  EXPECT_FALSE(contains(g.case_text(1), "reference/decode.cpp: READ")) << g.case_text(1);
}

TEST_P(hostile, control_without_the_sandbox_the_copy_works) {
  Graded g = grade("steal", dir_, "--sandbox off");
  expect_clean(g);
  EXPECT_GT(g.passed(), 0) << "the attack must be real for the test above to mean anything\n"
                           << g.results_text;
  EXPECT_TRUE(contains(g.case_text(1), "fixture: READ")) << g.case_text(1);
}

TEST_P(hostile, a_setsid_child_dies_with_the_grader_and_never_rewrites_the_results) {
  Graded g =
      grade("setsid", dir_, "", "KVCOURSE_HOSTILE_TARGET=" + (dir_ / "results.json").string());
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.results_text;
  EXPECT_FALSE(contains(g.results_text, "forged"));
}

TEST_P(hostile, control_without_the_sandbox_the_setsid_child_rewrites_the_results) {
  const std::string mark = "KVCOURSE_HOSTILE_MARK=" + testing_support::unique_token();
  const fs::path results = dir_ / "results.json";
  const std::string command =
      mark + " KVCOURSE_HOSTILE=setsid KVCOURSE_HOSTILE_TARGET=" + results.string() +
      " KVCOURSE_PROGRESS=" + (dir_ / "p.json").string() + " " + testing_support::bin("grader") +
      " --runner " + testing_support::bin("runner-hostile") +
      " --stage cache-structure --format gradescope --sandbox off -o " + results.string();
  EXPECT_EQ(run(command).exit_code, 0);
  // The child polls every 20 ms for the final document; give it up to 10 s.
  bool forged = false;
  for (int i = 0; i < 500 && !forged; ++i) {
    forged = contains(testing_support::read_file(results), "forged");
    if (!forged) ::usleep(20000);
  }
  for (int pid : testing_support::processes_with_environment(mark)) ::kill(pid, SIGKILL);
  EXPECT_TRUE(forged) << "the attack must be real for the test above to mean anything";
}

TEST_P(hostile, signals_do_not_reach_the_grader) {
  Graded g = grade("signal", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
  EXPECT_TRUE(contains(g.case_text(1), "kill(parent")) << g.case_text(1);
}

TEST_P(hostile, writes_to_the_course_and_the_results_reach_nothing) {
  TempDir copy;
  fs::copy(testing_support::source_dir() / "fixtures" / "cache-structure", copy.path(),
           fs::copy_options::recursive);
  const fs::path fixture = copy / "02-one-append.json";
  const std::string fixture_before = testing_support::read_file(fixture);
  const fs::path probe =
      testing_support::source_dir() / "src" / ("hostile-" + testing_support::unique_token());
  const fs::path results = dir_ / "results.json";
  const std::string targets =
      fixture.string() + ":" + probe.string() + ":" + results.string() + ":" +
      (testing_support::source_dir() / "fixtures" / "hostile-probe").string();
  Graded g = grade("write", dir_, "", "KVCOURSE_HOSTILE_TARGET=" + targets);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
  EXPECT_EQ(testing_support::read_file(fixture), fixture_before);
  EXPECT_FALSE(fs::exists(probe));
  EXPECT_FALSE(contains(g.case_text(1), "WRITTEN")) << g.case_text(1);
  EXPECT_TRUE(denied(g.case_text(1))) << g.case_text(1);
}

TEST_P(hostile, a_stray_frame_fails_its_case_only) {
  Graded g = grade("stray", dir_);
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "runner_error") << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "while request #")) << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1)
      << "the next cases run in a fresh runner, on their own answers";
}

TEST_P(hostile, an_answer_with_another_id_is_refused) {
  Graded g = grade("wrong_id", dir_);
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "runner_error") << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

TEST_P(hostile, a_deeply_nested_answer_fails_its_case) {
  Graded g = grade("nested", dir_);
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "runner_error") << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "nested deeper than 64 levels")) << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

TEST_P(hostile, a_huge_answer_is_refused_unread) {
  Graded g = grade("huge", dir_);
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "runner_error") << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "more than the")) << g.case_text(1);
  EXPECT_LT(g.cases()[1]["seconds"].get<double>(), 5.0) << "refused from its header, not read";
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

TEST_P(hostile, a_fork_bomb_stops_at_the_process_limit_and_dies_with_the_case) {
  Graded g = grade("fork_bomb", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
#if defined(__SANITIZE_ADDRESS__)
  // A sanitized runner's filter lets it fork (LeakSanitizer's tracer is a new process):
  // the process limit stops the bomb.
  EXPECT_TRUE(contains(g.case_text(1), "then: Resource temporarily unavailable")) << g.case_text(1);
#else
  // Threads only (the system call filter): not one child.
  EXPECT_TRUE(contains(g.case_text(1), "forked 0 children, then: Operation not permitted"))
      << g.case_text(1);
#endif
}

TEST_P(hostile, what_a_case_starts_dies_with_the_case) {
  Graded g = grade("linger", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
#if !defined(__SANITIZE_ADDRESS__)  // a sanitized runner may fork; its child must die all the same
  EXPECT_TRUE(contains(g.case_text(1), "linger: fork: Operation not permitted")) << g.case_text(1);
#endif
  for (int i = 2; i < stage_cases(); ++i)
    EXPECT_FALSE(contains(g.case_text(i), "ALIVE")) << g.case_text(i);
}

TEST_P(hostile, allocating_6_gb_is_refused) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer runners have no address-space limit (it reserves terabytes)";
#endif
  Graded g = grade("alloc", dir_);
  expect_clean(g);
  EXPECT_TRUE(contains(g.case_text(1), "allocating 6 GB: refused")) << g.case_text(1);
}

TEST_P(hostile, memory_spread_over_children_is_not_had) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP()
      << "AddressSanitizer runners have no address-space limit and may fork (LeakSanitizer's "
         "tracer is a new process)";
#endif
  Graded g = grade("hog_children", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
  EXPECT_TRUE(contains(g.case_text(1), "hog: fork: Operation not permitted")) << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "hog: 0 of 3 children")) << g.case_text(1);
}

TEST_P(hostile, many_files_stop_at_the_scratch_quota) {
  Graded g = grade("fill_files", dir_);
  expect_clean(g);
  // Namespaces: the 64 MiB tmpfs is full. The uid mode: the quota watch kills the runner.
  EXPECT_GE(g.passed(), stage_cases() - 1) << g.output;
  const std::string text = g.case_text(1);
  if (uid_mode()) {
    EXPECT_TRUE(contains(text, "MiB its scratch space may hold") || contains(text, "No space left"))
        << text;
  } else {
    EXPECT_TRUE(contains(text, "No space left on device")) << text;
  }
  EXPECT_EQ(g.results["sandbox"]["mode"], GetParam());
}

TEST_P(hostile, a_world_writable_results_folder_is_not_forged) {
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0777), 0);
  const fs::path results = dir_ / "results.json";
  Graded g = grade("forge_results", dir_, "", "KVCOURSE_HOSTILE_TARGET=" + results.string());
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
  EXPECT_FALSE(contains(g.results_text, "forged")) << g.results_text;
  EXPECT_FALSE(contains(g.case_text(1), "RENAMED")) << g.case_text(1);
  if (uid_mode()) {
    EXPECT_TRUE(fs::status(dir_.path()).permissions() == (fs::perms::all | fs::perms::sticky_bit));
  }
}

TEST_P(hostile, a_cpu_spin_times_out_and_is_killed) {
  Graded g = grade("spin", dir_, "--timeout 1");
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "timed_out") << g.case_text(1);
  EXPECT_TRUE(
      contains(g.case_text(1), "CPU-s of the 1.0 allowed (set by --timeout): an endless loop?"))
      << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

// Without --timeout the budget comes from the case's recorded work: 02-one-append runs no
// model, so it has the floor, 3 CPU-s.
TEST_P(hostile, a_cpu_spin_is_stopped_at_the_cases_derived_cpu_budget) {
  Graded g = grade("spin", dir_);
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "timed_out") << g.case_text(1);
  EXPECT_TRUE(
      contains(g.case_text(1),
               "CPU-s of the 3.0 allowed (3 CPU-s: the reference puts nothing through the model)"))
      << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

TEST_P(hostile, a_sleep_is_stopped_by_the_wall_clock_backstop) {
  Graded g = grade("sleep", dir_, "--timeout 0.2");
  expect_clean(g);
  EXPECT_EQ(g.cases()[1]["status"], "timed_out") << g.case_text(1);
  // The wait is the one measured, the backstop (2.0 s) or a poll later on a loaded
  // machine: "2.0 s" or "2.1 s" say the same.
  EXPECT_TRUE(std::regex_search(g.case_text(1),
                                std::regex("no answer after waiting 2\\.[0-9] s, while the runner used "
                                           "0\\.0 CPU-s of the 0\\.2 allowed: blocked or sleeping\\?")))
      << g.case_text(1);
  EXPECT_EQ(g.passed(), stage_cases() - 1);
}

TEST_P(hostile, filling_the_disk_stops_at_the_scratch_limit) {
  Graded g = grade("fill_disk", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases()) << g.output;
  const std::string text = g.case_text(1);
  EXPECT_TRUE(contains(text, "fill: stopped after 32 MiB: File too large") ||
              contains(text, "No space left on device"))
      << text;
}

TEST_P(hostile, escape_sequences_stay_in_the_results_document) {
  Graded g = grade("escapes", dir_);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases());
  EXPECT_TRUE(contains(g.cases()[1]["output"].get<std::string>(), "\x1b]0;pwned"))
      << "kept, as JSON escapes";
  EXPECT_FALSE(contains(g.results_text, "\x1b")) << "no raw escape byte in the file";
}

// The learner's output is shown with control characters made visible (cli/report.cpp).
TEST_P(hostile, escape_sequences_never_reach_the_terminal_raw) {
  auto r =
      run("KVCOURSE_HOSTILE=escapes NO_COLOR=1 KVCOURSE_PROGRESS=" + (dir_ / "p.json").string() +
          " " + testing_support::bin("grader") + " --runner " +
          testing_support::bin("runner-hostile") + " --stage cache-structure");
  EXPECT_FALSE(contains(r.output, "\x1b")) << r.output;
}

TEST_P(hostile, the_network_is_out_of_reach) {
  // A TCP listener on the loopback and an abstract unix socket, both of this test.
  const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(tcp, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
  ASSERT_EQ(::listen(tcp, 4), 0);
  socklen_t len = sizeof in;
  ::getsockname(tcp, reinterpret_cast<sockaddr*>(&in), &len);
  const std::string name = "kvcourse-hostile-" + testing_support::unique_token();
  const int local = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(::bind(local, reinterpret_cast<sockaddr*>(&un),
                   socklen_t(sizeof(sa_family_t) + 1 + name.size())),
            0);
  ASSERT_EQ(::listen(local, 4), 0);

  Graded g = grade("network", dir_, "",
                   "KVCOURSE_HOSTILE_PORT=" + std::to_string(ntohs(in.sin_port)) +
                       " KVCOURSE_HOSTILE_TARGET=" + name);
  expect_clean(g);
  EXPECT_EQ(g.passed(), stage_cases());
  EXPECT_FALSE(contains(g.case_text(1), "CONNECTED")) << g.case_text(1);
  EXPECT_TRUE(contains(g.case_text(1), "tcp 127.0.0.1: ")) << g.case_text(1);
  EXPECT_LT(::accept(tcp, nullptr, nullptr), 0) << "a connection reached the test's listener";
  EXPECT_LT(::accept(local, nullptr, nullptr), 0) << "a connection reached the test's unix socket";
  ::close(tcp);
  ::close(local);
}

// ---------------------------------------------------------------------------------------
// Compiling: the learner's code sees the course interface and the model's public headers,
// nothing else of the course, by any path.

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// The compile command the build runs for src/kvcache.cpp, from compile_commands.json.
json learner_compile_entry() {
  const json commands = json::parse(
      testing_support::read_file(fs::path(KVCOURSE_BUILD_DIR) / "compile_commands.json"));
  const std::string source = (testing_support::source_dir() / "src" / "kvcache.cpp").string();
  for (const json& e : commands)
    if (e["file"] == source && contains(e["command"].get<std::string>(), "runner-learner.dir"))
      return e;
  return nullptr;
}

// Compiles `text` exactly as the learner's runner is compiled: the same launcher
// (sandbox-compile with the learner's folders) and the same command, with the probe's own
// folder shown to the sandbox the way src/ is.
testing_support::CommandResult compile_like_the_learner(const std::string& text,
                                                        const TempDir& dir) {
  const fs::path probe = dir / "probe.cpp";
  testing_support::write_file(probe, text);
  std::string launcher;
  for (const std::string& arg : lines_of(testing_support::read_file(KVCOURSE_LAUNCHER_FILE))) {
    if (arg == "--") launcher += "--write " + quote(dir.path().string()) + " ";
    launcher += quote(arg) + " ";
  }
  const json entry = learner_compile_entry();
  std::string command = entry["command"].get<std::string>();
  const std::string source = entry["file"].get<std::string>();
  command.replace(command.find(source), source.size(), probe.string());
  const size_t out = command.find(" -o ");
  command.replace(out + 4, command.find(' ', out + 4) - out - 4, (dir / "probe.o").string());
  return run("cd " + quote(entry["directory"].get<std::string>()) + " && " + g_wrapper + launcher +
             command);
}

}  // namespace

TEST(compile_sandbox, the_learners_include_path_is_the_interface_and_the_models_public_headers) {
  const json entry = learner_compile_entry();
  ASSERT_FALSE(entry.is_null()) << "no compile command for src/kvcache.cpp in runner-learner";
  std::vector<std::string> includes;
  std::istringstream words(entry["command"].get<std::string>());
  for (std::string w; words >> w;)
    if (w.rfind("-I", 0) == 0) includes.push_back(w.substr(2));
  const fs::path root = testing_support::source_dir();
  EXPECT_EQ(includes, (std::vector<std::string>{(root / "include").string(),
                                                (root / "model/include").string()}));
}

TEST(compile_sandbox, the_interface_and_the_models_headers_compile) {
  TempDir dir;
  auto r = compile_like_the_learner(
      "#include \"course/adapters.hpp\"\n#include \"gpt2.hpp\"\n#include \"ops.hpp\"\n"
      "float probe() { return gpt2::attention_scale(64); }\n",
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(compile_sandbox, no_path_reaches_the_courses_private_files) {
  const fs::path root = testing_support::source_dir();
  TempDir dir;
  const std::string relative = fs::relative(root / "reference" / "decode.cpp", dir.path()).string();
  for (const std::string& include :
       {std::string("reference/decode.cpp"), std::string("wire/protocol.hpp"),
        std::string("grader/wire/protocol.hpp"), std::string("runner/bindings.hpp"),
        std::string("../reference/decode.cpp"), relative,
        (root / "reference" / "decode.cpp").string(),
        (root / "tests" / "test_support.hpp").string(),
        (root / "model" / "kernels.hpp").string()}) {
    auto r = compile_like_the_learner("#include \"" + include + "\"\n", dir);
    EXPECT_NE(r.exit_code, 0) << include << " compiled";
    EXPECT_TRUE(contains(r.output, include + ": No such file or directory")) << include << ":\n"
                                                                             << r.output;
  }
}

// The uid mode (namespaces refused, root): the compiler runs as the runner's uid, to which
// the grader has closed the fixtures.
TEST(compile_sandbox, in_the_uid_mode_a_fixture_cannot_be_included) {
  TempDir dir, state;
  // A grading run in the uid mode closes the answers to the runner's uid first.
  auto graded = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " " +
                    testing_support::bin("grader") +
                    " --impl reference --stage cache-structure --sandbox uid");
  ASSERT_EQ(graded.exit_code, 0) << graded.output;
  ::chmod(dir.path().c_str(), 0755);
  g_wrapper = "KVCOURSE_SANDBOX=strict " + testing_support::bin("no-namespaces") + " ";
  for (const char* fixture : {"fixtures/cache-structure/01-empty.json",
                              "fixtures-hidden/cache-structure/01-empty.json"}) {
    const std::string path = (testing_support::source_dir() / fixture).string();
    auto r = compile_like_the_learner("#include \"" + path + "\"\n", dir);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "Permission denied")) << r.output;
  }
  g_wrapper.clear();
}

TEST(compile_sandbox, the_assembler_cannot_embed_a_fixture) {
  TempDir dir;
  const std::string fixture =
      (testing_support::source_dir() / "fixtures/cache-structure/01-empty.json").string();
  auto r = compile_like_the_learner("asm(\".incbin \\\"" + fixture + "\\\"\");\n", dir);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "file not found: " + fixture)) << r.output;
}
