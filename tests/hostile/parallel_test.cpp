// Several runners grading one stage at once (`grader --jobs`, grader/SANDBOX.md "Several
// runners at once"): the verdicts, their order and their messages are those of one
// runner; a case that spins is stopped by its own CPU budget while the other runner's
// cases pass; and in the uid mode each runner has a uid of its own. runner-hostile with
// $KVCOURSE_HOSTILE_SAY prints in every case which runner process answered it.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "test_support.hpp"

using json = nlohmann::json;
using testing_support::bin;
using testing_support::run;
using testing_support::TempDir;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string grader(const std::string& args, const TempDir& state) {
  return "KVCOURSE_PROGRESS=" + (state / "progress.json").string() + " NO_COLOR=1 " +
         bin("grader") + " " + args;
}

// The results without the seconds, which differ from run to run.
json without_times(json j) {
  if (j.is_object()) {
    j.erase("seconds");
    for (auto& [key, value] : j.items()) value = without_times(value);
  } else if (j.is_array()) {
    for (json& value : j) value = without_times(value);
  }
  return j;
}

// The text without the lines that say how the runners were isolated (in the uid mode
// they name each runner's uid).
std::string without_sandbox_lines(const std::string& text) {
  std::string out, line;
  for (size_t at = 0; at < text.size(); at += line.size() + 1) {
    line = text.substr(at, text.find('\n', at) - at);
    if (!contains(line, "sandbox:")) out += line + "\n";
  }
  return out;
}

// The same grading with one runner and with two: the text verdict (without times) and
// the JSON results of the stage must be the same.
void expect_same_with_two_runners(const std::string& env, const std::string& args) {
  TempDir state;
  const std::string text = env + " " + grader(args + " --no-times", state);
  const auto one = run(text + " --jobs 1");
  const auto two = run(text + " --jobs 2");
  EXPECT_EQ(one.exit_code, two.exit_code) << two.output;
  EXPECT_EQ(without_sandbox_lines(one.output), without_sandbox_lines(two.output));
  const std::string doc = env + " " + grader(args + " --format json", state);
  const auto one_json = run(doc + " --jobs 1", false);
  const auto two_json = run(doc + " --jobs 2", false);
  EXPECT_EQ(without_times(json::parse(one_json.output)["stages"]),
            without_times(json::parse(two_json.output)["stages"]))
      << two_json.output;
}

// "runner R as uid U" in a case's output: R, and U in `uid`.
std::string runner_of(const json& c, std::string* uid = nullptr) {
  const std::string output = c["output"].get<std::string>();
  const size_t at = output.find("runner ");
  if (at == std::string::npos) return "";
  const size_t as = output.find(" as uid ", at);
  const size_t end = output.find('\n', at);
  if (as == std::string::npos || end == std::string::npos) return "";
  if (uid) *uid = output.substr(as + 8, end - as - 8);
  return output.substr(at + 7, as - at - 7);
}

// Grades cache-structure with runner-hostile, which spins in case 02-one-append (the
// stage's second case) and says which runner answers every case; `wrapper` runs the
// grader ("" or no-namespaces: the uid mode).
json spin_in_the_second_case(const std::string& wrapper, int jobs, const TempDir& state,
                             std::vector<int>& left) {
  const std::string mark = "KVCOURSE_HOSTILE_MARK=" + testing_support::unique_token();
  auto r = run(mark + " KVCOURSE_HOSTILE=spin KVCOURSE_HOSTILE_SAY=1 " + wrapper +
                   grader("--runner " + bin("runner-hostile") +
                              " --stage cache-structure --timeout 2 --format json --jobs " +
                              std::to_string(jobs),
                          state),
               false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  left = testing_support::processes_with_environment(mark);
  for (int pid : left) ::kill(pid, SIGKILL);
  return json::parse(r.output)["stages"][0]["cases"];
}

// What spin_in_the_second_case must give, whatever the number of runners: the spin is
// stopped by its CPU budget, every other case passes, and no process is left.
void expect_only_the_spin_fails(const json& cases, const std::vector<int>& left) {
  ASSERT_EQ(cases.size(), 10u) << cases;
  EXPECT_EQ(cases[1]["status"], "timed_out") << cases[1];
  EXPECT_TRUE(contains(cases[1]["message"].get<std::string>(),
                       "CPU-s of the 2.0 allowed (set by --timeout): an endless loop?"))
      << cases[1];
  for (size_t i = 0; i < cases.size(); ++i)
    if (i != 1) {
      EXPECT_EQ(cases[i]["status"], "passed") << cases[i];
    }
  EXPECT_EQ(left, std::vector<int>{}) << "a runner outlived the grader";
}

}  // namespace

TEST(parallel_runners, give_the_same_verdicts_messages_and_order_as_one) {
  // Passes; a crash in one case; a mistake identified by its answers; a stage whose setup
  // fails (every case says the first failure's words).
  expect_same_with_two_runners("", "--impl reference --stage cache-structure");
  expect_same_with_two_runners(
      "KVCOURSE_MISBEHAVE=segfault",
      "--runner " + bin("runner-misbehaving") + " --stage cache-structure");
  expect_same_with_two_runners(
      "", "--runner " + bin("runner-buggy-kv_swapped") + " --stage cache-structure");
  expect_same_with_two_runners(
      "", "--runner " + bin("runner-buggy-masked_decode") + " --stage one-token");
  expect_same_with_two_runners("KVCOURSE_HOSTILE=setup_fails",
                               "--runner " + bin("runner-hostile") + " --stage one-token");
}

TEST(parallel_runners, a_spinning_case_is_stopped_by_its_cpu_budget_while_the_other_runner_passes) {
  TempDir state;
  std::vector<int> left;
  const json one = spin_in_the_second_case("", 1, state, left);
  expect_only_the_spin_fails(one, left);
  // One runner: the first two cases in the same process.
  EXPECT_EQ(runner_of(one[0]), runner_of(one[1])) << one;

  const json two = spin_in_the_second_case("", 2, state, left);
  expect_only_the_spin_fails(two, left);
  // Two runners: the first case in one, the spinning second in the other, from the start.
  ASSERT_NE(runner_of(two[0]), "") << two[0];
  ASSERT_NE(runner_of(two[1]), "") << two[1];
  EXPECT_NE(runner_of(two[0]), runner_of(two[1])) << two;
}

// The uid mode (as root where namespaces are refused, as in Docker): a uid per runner, so
// that neither can signal the other and the end of one kills nothing of the other.
TEST(parallel_runners, in_the_uid_mode_each_runner_has_a_uid_of_its_own) {
  TempDir state;
  const std::string wrapper = bin("no-namespaces") + " env ";
  std::vector<int> left;
  const json two = spin_in_the_second_case(wrapper, 2, state, left);
  expect_only_the_spin_fails(two, left);
  std::string uid0, uid1;
  ASSERT_NE(runner_of(two[0], &uid0), "") << two[0];
  ASSERT_NE(runner_of(two[1], &uid1), "") << two[1];
  EXPECT_NE(uid0, uid1) << two;
  std::set<std::string> uids;
  for (const json& c : two) {
    std::string uid;
    if (!runner_of(c, &uid).empty()) uids.insert(uid);
  }
  EXPECT_EQ(uids, (std::set<std::string>{uid0, uid1})) << "every runner as one of the two uids";

  // The sandbox line names both.
  auto r = run(wrapper + grader("--impl reference --stage cache-structure --jobs 2", state));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "for the runners beside it, one uid each")) << r.output;
  expect_same_with_two_runners(
      "KVCOURSE_MISBEHAVE=segfault " + wrapper,
      "--runner " + bin("runner-misbehaving") + " --stage cache-structure");
}
