// The sandbox as the command line shows it (grader/SANDBOX.md): the --sandbox modes and
// the one line saying which isolation was in force, the degraded mode where the kernel
// refuses namespaces, the results file that is never empty, a stage whose setup fails,
// and crashes located at the learner's line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "test_support.hpp"

using json = nlohmann::json;
using testing_support::run;
using testing_support::TempDir;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string grader(const std::string& args, const TempDir& state) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " +
         testing_support::bin("grader") + " " + args;
}

// The command run where the kernel refuses new user namespaces: inside a user namespace
// whose limit of nested ones is 0.
std::string without_namespaces(const std::string& command) {
  return "unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && "
         "exec env " +
         command + "'";
}

int count_lines_with(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(sandbox, strict_grades_with_the_full_isolation_and_says_so) {
  TempDir state;
  auto r = run(grader("--impl reference --stage cache-structure --sandbox strict", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "sandbox: user, mount, PID, network and IPC namespaces"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "warning")) << r.output;
}

TEST(sandbox, off_says_so) {
  TempDir state;
  auto r = run(grader("--impl reference --stage cache-structure --sandbox off", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "sandbox: off")) << r.output;
}

TEST(sandbox, without_namespaces_auto_degrades_with_one_warning_and_strict_refuses) {
  TempDir state;
  auto r = run(without_namespaces(grader("--impl reference --stage cache-structure", state)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_lines_with(r.output, "grader: warning: sandbox: degraded"), 1) << r.output;
  EXPECT_TRUE(contains(r.output, "All 10 cases pass.")) << r.output;

  r = run(without_namespaces(
      grader("--impl reference --stage cache-structure --sandbox strict --format json -o " +
                 (state / "r.json").string(),
             state)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--sandbox=strict: the runner cannot be isolated here, neither by "
                       "namespaces nor by a uid of its own"))
      << r.output;
  json doc = json::parse(testing_support::read_file(state / "r.json"));
  EXPECT_EQ(doc["passed"], false);
  EXPECT_TRUE(contains(doc["error"].get<std::string>(), "--sandbox=strict")) << doc.dump();
}

TEST(sandbox, without_namespaces_what_the_runner_leaves_is_swept) {
  TempDir state;
  const std::string mark = "KVCOURSE_HOSTILE_MARK=" + testing_support::unique_token();
  auto r = run(without_namespaces(
      mark + " KVCOURSE_HOSTILE=setsid KVCOURSE_HOSTILE_TARGET=/nonexistent " +
      grader("--runner " + testing_support::bin("runner-hostile") + " --stage cache-structure",
             state)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto left = testing_support::processes_with_environment(mark);
  for (int pid : left) ::kill(pid, SIGKILL);
  EXPECT_EQ(left, std::vector<int>{}) << "the setsid child outlived the grader";
}

namespace {

// Kills the grader while its runner spins; `wrapper` runs it (no-namespaces: the uid
// mode), `processes` carry the mark once the runner is up.
void kill_the_grader_mid_run(const std::string& wrapper, size_t processes) {
  TempDir state;
  const fs::path results = state / "results.json";
  const std::string mark = "KVCOURSE_HOSTILE_MARK=" + testing_support::unique_token();
  const std::string command =
      mark + " KVCOURSE_HOSTILE=spin " + wrapper +
      grader("--runner " + testing_support::bin("runner-hostile") +
                 " --stage cache-structure --timeout 60 --format gradescope -o " + results.string(),
             state);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec env " + command + " >/dev/null 2>&1").c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (at most 30 s) until a runner is up: the grader, the sandbox's first process
  // and the runner carry the mark. (With two runners at once, the one that does not spin
  // may be done again by the time of another look: the count seen is the one kept.)
  size_t seen = 0;
  for (int i = 0; i < 3000 && (seen = testing_support::processes_with_environment(mark).size()) <
                                  processes;
       ++i)
    ::usleep(10000);
  ASSERT_GE(seen, processes);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  // The sandbox dies with its parent (a parent-death signal): wait at most 5 s for it.
  std::vector<int> left;
  for (int i = 0; i < 500 && !(left = testing_support::processes_with_environment(mark)).empty();
       ++i)
    ::usleep(10000);
  for (int p : left) ::kill(p, SIGKILL);
  EXPECT_EQ(left, std::vector<int>{}) << "the runner outlived the killed grader";
  json doc = json::parse(testing_support::read_file(results));
  EXPECT_EQ(doc["score"], 0);
  EXPECT_TRUE(contains(doc["output"].get<std::string>(), "did not finish")) << doc.dump();
}

}  // namespace

TEST(sandbox, a_killed_grader_leaves_a_results_file_that_says_error) {
  kill_the_grader_mid_run("", 3);
}

// The uid mode: the runner is the grader's child, with a parent-death signal.
TEST(sandbox, in_the_uid_mode_a_killed_grader_leaves_no_runner_and_a_results_file_that_says_error) {
  kill_the_grader_mid_run(testing_support::bin("no-namespaces") + " env ", 2);
}

TEST(sandbox, with_nothing_left_to_grade_a_results_file_is_still_complete) {
  TempDir state;
  json manifest = json::parse(
      testing_support::read_file(testing_support::source_dir() / "stages/manifest.json"));
  json progress = {{"stages", json::object()}};
  for (const json& s : manifest["stages"])
    progress["stages"][s["slug"].get<std::string>()] = "passed";
  testing_support::write_file(state / "progress.json", progress.dump());
  auto r = run(grader("-o " + (state / "r.txt").string(), state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(testing_support::read_file(state / "r.txt"), "Every stage passes."))
      << r.output;
  r = run(grader("--format json -o " + (state / "r.json").string(), state));
  EXPECT_EQ(r.exit_code, 1) << "the skeleton fails every stage\n" << r.output;
  json doc = json::parse(testing_support::read_file(state / "r.json"));
  EXPECT_EQ(doc["passed"], false);
  EXPECT_EQ(doc["stages"].size(), manifest["stages"].size()) << "every stage, graded again";
}

TEST(sandbox, a_setup_that_fails_fails_the_stage_once_with_its_cause) {
  TempDir state;
  auto r = run("KVCOURSE_HOSTILE=setup_fails " +
                   grader("--runner " + testing_support::bin("runner-hostile") +
                              " --stage one-token --format json",
                          state),
               false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  json doc = json::parse(r.output);
  for (const json& c : doc["stages"][0]["cases"]) {
    EXPECT_EQ(c["status"], "runner_error");
    EXPECT_EQ(c["message"], "the stage's setup failed: the weights are broken");
  }
}

TEST(sandbox, a_setup_that_hangs_is_not_retried_for_every_case) {
  TempDir state;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run("KVCOURSE_HOSTILE=setup_hangs " +
                   grader("--runner " + testing_support::bin("runner-hostile") +
                              " --stage one-token --timeout 0.05 --format json",
                          state),
               false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  json doc = json::parse(r.output);
  const json& cases = doc["stages"][0]["cases"];
  ASSERT_GE(cases.size(), 3u);
  // The setup sleeps: its wall-clock backstop stops it, 3 s (ten times its CPU budget of
  // 6 x 0.05 CPU-s), and the message says how little the runner computed meanwhile: its
  // start before the sleep, 0.0 CPU-s here and 0.1 under AddressSanitizer on a loaded
  // machine (CI, 2026-12-06), well under the 0.3 allowed.
  for (const json& c : cases) {
    const std::string message = c["message"].get<std::string>();
    // The wait is the one measured: the backstop, or a poll later on a loaded machine.
    EXPECT_TRUE(std::regex_search(message, std::regex("no answer after waiting 3\\.[0-9] s, while the runner "
                                                      "used 0\\.[0-2] CPU-s of the 0\\.3 allowed: blocked or "
                                                      "sleeping\\?")))
        << c;
  }
  // One setup backstop is 3 s; one per case would be 3 s times the cases.
  EXPECT_LT(seconds, 3.0 * double(cases.size()) - 2.0) << "the setup was tried again";
}

TEST(sandbox, an_index_out_of_range_is_located_at_the_learners_line) {
  TempDir state;
  auto r = run("KVCOURSE_CRASH=index " + grader("--runner " + testing_support::bin("runner-crash") +
                                                    " --stage cache-structure",
                                                state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      contains(r.output, "a bounds check failed in std::vector::operator[] (__n < this->size())"))
      << r.output;
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(contains(
      r.output,
      "killed by signal 6 (Aborted) in read_past_end (tests/hostile/crash_adapters.cpp:25), "
      "called from run_cache_plan (tests/hostile/crash_adapters.cpp:55)"))
      << r.output;
#endif
}

TEST(sandbox, a_bad_pointer_is_located_at_the_learners_line) {
  TempDir state;
  auto r = run("KVCOURSE_CRASH=null " + grader("--runner " + testing_support::bin("runner-crash") +
                                                   " --stage cache-structure",
                                               state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(contains(r.output,
                       "killed by signal 11 (Segmentation fault) in write_through_null "
                       "(tests/hostile/crash_adapters.cpp:31), called from run_cache_plan "
                       "(tests/hostile/crash_adapters.cpp:58)"))
      << r.output;
#endif
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
}

// An exception is located where it was thrown, as a crash is where it stopped: the
// library's (vector::at), the learner's own throw, and the course's PoolExhausted.
TEST(sandbox, an_exception_from_vector_at_is_located_at_the_learners_line) {
  TempDir state;
  auto r = run("KVCOURSE_CRASH=at " + grader("--runner " + testing_support::bin("runner-crash") +
                                                 " --stage cache-structure",
                                             state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "the code under test threw std::out_of_range in read_with_at "
                       "(tests/hostile/crash_adapters.cpp:35), called from run_cache_plan "
                       "(tests/hostile/crash_adapters.cpp:60): vector::_M_range_check"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "9 of 10 cases pass.")) << r.output;
}

TEST(sandbox, a_learners_own_throw_is_located_at_the_learners_line) {
  TempDir state;
  auto r = run("KVCOURSE_CRASH=throw " + grader("--runner " + testing_support::bin("runner-crash") +
                                                    " --stage cache-structure",
                                                state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "the code under test threw std::invalid_argument in check_plan "
                       "(tests/hostile/crash_adapters.cpp:39), called from run_cache_plan "
                       "(tests/hostile/crash_adapters.cpp:63): check_plan: a two-step plan"))
      << r.output;
}

TEST(sandbox, pool_exhausted_is_located_where_it_was_thrown) {
  TempDir state;
  auto r = run("KVCOURSE_CRASH=pool " + grader("--runner " + testing_support::bin("runner-crash") +
                                                   " --stage cache-structure",
                                               state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      contains(r.output,
               "the code under test threw course::PoolExhausted in take_block "
               "(tests/hostile/crash_adapters.cpp:43), called from grow_by_one "
               "(tests/hostile/crash_adapters.cpp:47): take_block: all 4 blocks are in use"))
      << r.output;
}

// Without debug info (a Release build) no line can be named: the verdict says so, with
// the function the symbol table names and the flag that gives the line.
TEST(sandbox, without_debug_info_the_verdict_names_the_function_and_says_what_gives_the_line) {
  TempDir state;
  const std::string runner =
      " --runner " + testing_support::bin("runner-crash-nodebug") + " --stage cache-structure";
  auto r = run("KVCOURSE_CRASH=pool " + grader(runner, state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      contains(r.output,
               "threw course::PoolExhausted in take_block (no file or line: the runner was built "
               "without debug info; compile with -g, as the default RelWithDebInfo build does)"))
      << r.output;
#if !defined(__SANITIZE_ADDRESS__)
  r = run("KVCOURSE_CRASH=null " + grader(runner, state));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      contains(r.output,
               "killed by signal 11 (Segmentation fault) in write_through_null (no file or line: "
               "the runner was built without debug info"))
      << r.output;
#endif
}

// As root where namespaces are refused (Docker's default profile): the uid mode, which
// strict accepts, named in every document.
TEST(sandbox, without_namespaces_as_root_strict_grades_in_the_uid_mode_and_every_document_says_so) {
  TempDir state;
  const std::string wrapper = testing_support::bin("no-namespaces") + " env ";
  auto r =
      run(wrapper +
          grader("--impl reference --stage cache-structure --sandbox strict --format json -o " +
                     (state / "r.json").string(),
                 state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  json doc = json::parse(testing_support::read_file(state / "r.json"));
  EXPECT_EQ(doc["sandbox"]["mode"], "uid") << doc["sandbox"];
  EXPECT_EQ(doc["sandbox"]["protected"], true);
  r = run(wrapper + grader("--impl reference --stage cache-structure --format gradescope", state),
          false);
  doc = json::parse(r.output);
  EXPECT_EQ(doc["extra_data"]["sandbox"]["mode"], "uid") << r.output;
  EXPECT_TRUE(contains(doc["output"].get<std::string>(), "sandbox: uid ")) << r.output;
  r = run(wrapper + grader("--impl reference --stage cache-structure --format exercism", state),
          false);
  doc = json::parse(r.output);
  EXPECT_EQ(doc["sandbox"]["mode"], "uid") << r.output;
  EXPECT_EQ(doc["status"], "pass");
  EXPECT_FALSE(doc.contains("message")) << "a protected grade has no top-level message";
}

// Where no second uid can be used (a user namespace that maps only root), the documents
// say that the grade is not protected, where the learner reads them.
TEST(sandbox, without_a_second_uid_every_document_says_the_grade_is_not_protected) {
  TempDir state;
  auto r = run(without_namespaces(
                   grader("--impl reference --stage cache-structure --format exercism", state)),
               false);
  json doc = json::parse(r.output);
  EXPECT_EQ(doc["sandbox"]["mode"], "unprotected") << r.output;
  EXPECT_EQ(doc["sandbox"]["protected"], false);
  EXPECT_TRUE(contains(doc["message"].get<std::string>(), "the grade is NOT protected"))
      << r.output;
  r = run(without_namespaces(
              grader("--impl reference --stage cache-structure --format gradescope", state)),
          false);
  doc = json::parse(r.output);
  EXPECT_TRUE(contains(doc["output"].get<std::string>(), "the grade is NOT protected")) << r.output;
  EXPECT_EQ(doc["extra_data"]["sandbox"]["protected"], false);
}
