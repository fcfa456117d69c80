// A verdict judges the code, not the machine: with both cores of the machine kept busy by
// two spinning processes for the whole run, the reference still passes every stage,
// because each case's limit is the runner's CPU time (judge/grade.hpp, case_budget) and
// the wall clock is only a backstop many times larger.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.hpp"

using json = nlohmann::json;
using testing_support::bin;
using testing_support::run;
using testing_support::TempDir;

namespace {

// A child that spins until killed, or for at most `limit_s` seconds of its own CPU time.
pid_t start_spinner(double limit_s) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    volatile unsigned long spins = 0;
    timespec ts{};
    while (true) {
      for (int i = 0; i < 1000000; ++i) spins = spins + 1;
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      if (double(ts.tv_sec) > limit_s) ::_exit(0);
    }
  }
  return pid;
}

// The spinner's CPU seconds so far (utime + stime of /proc/PID/stat).
double cpu_seconds(pid_t pid) {
  const std::string stat = testing_support::read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

}  // namespace

TEST(load, the_reference_passes_every_stage_while_two_spinners_keep_both_cores_busy) {
  TempDir state;
  const pid_t spinners[2] = {start_spinner(900), start_spinner(900)};
  ASSERT_GT(spinners[0], 0);
  ASSERT_GT(spinners[1], 0);
  auto r = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " " + bin("grader") +
                   " --impl reference --all --format json",
               false);
  const double spun[2] = {cpu_seconds(spinners[0]), cpu_seconds(spinners[1])};
  for (pid_t pid : spinners) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 4000);
  const json doc = json::parse(r.output);
  const json manifest = json::parse(
      testing_support::read_file(testing_support::source_dir() / "stages/manifest.json"));
  ASSERT_EQ(doc["stages"].size(), manifest["stages"].size());
  for (const json& stage : doc["stages"])
    for (const json& c : stage["cases"])
      EXPECT_EQ(c["status"], "passed") << stage["stage"] << " " << c.dump();
  // The load was real: the spinners computed during the run (a spinner that had ended
  // would read as -1).
  EXPECT_GT(spun[0], 1.0);
  EXPECT_GT(spun[1], 1.0);
}
