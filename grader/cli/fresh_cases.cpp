#include "cli/fresh_cases.hpp"

#include <sys/wait.h>

#include <chrono>
#include <stdexcept>

#include "judge/stage_fixtures.hpp"
#include "sandbox/process.hpp"

namespace course {

namespace fs = std::filesystem;

namespace {

// Runs argv[0] with `args`, its stdin /dev/null, its stderr the grader's; returns its
// standard output (at most kMaxFreshCasesBytes). Throws std::runtime_error when it cannot
// start, prints more, or does not exit 0.
std::string run_capturing(const std::vector<std::string>& args) {
  const Captured c = capture_output(args, kMaxFreshCasesBytes, std::chrono::milliseconds(0), false);
  if (!c.started) throw std::runtime_error("cannot start " + args[0] + " (no pipe or no fork)");
  if (c.too_much)
    throw std::runtime_error(args[0] + " printed more than " + std::to_string(kMaxFreshCasesBytes >> 20) +
                             " MiB of cases");
  if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0)
    throw std::runtime_error(args[0] + " could not draw the cases (" +
                             (WIFEXITED(c.status) ? "exit status " + std::to_string(WEXITSTATUS(c.status))
                                                  : "killed by signal " + std::to_string(WTERMSIG(c.status))) +
                             "; its messages are above)");
  return c.output;
}

// Each line of `text` a fixture of one of `stages`, checked as a committed one would be.
void read_fixture_lines(const std::string& text, const std::vector<const Stage*>& stages, uint64_t seed,
                        std::map<std::string, std::vector<Fixture>>& out) {
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string where = "fresh case " + std::to_string(line) + " of seed " + std::to_string(seed);
    Fixture fx = parse_fixture(text.substr(start, end - start), where);
    bool graded = false;
    for (const Stage* s : stages) graded = graded || s->slug == fx.stage;
    if (!graded) throw FixtureError(where + ": is of stage \"" + fx.stage + "\", which is not being graded");
    fx.file = "fresh case " + fx.stage + "/" + fx.name;
    check_case_input(fx);
    out[fx.stage].push_back(std::move(fx));
    start = end + 1;
  }
}

}  // namespace

uint64_t clock_seed() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) % 1000000u;
}

std::string random_replay(int count, uint64_t seed) {
  return "grader --random " + std::to_string(count) + " --seed " + std::to_string(seed);
}

std::map<std::string, std::vector<Fixture>> draw_fresh_cases(const fs::path& make_fixtures, int count, uint64_t seed,
                                                             const std::vector<const Stage*>& stages) {
  std::error_code ec;
  if (!fs::is_regular_file(make_fixtures, ec) || ::access(make_fixtures.c_str(), X_OK) != 0)
    throw std::runtime_error(
        "--random needs make-fixtures, which draws the cases and answers them with the reference solution, at " +
        make_fixtures.string() +
        "; it is built only in the course authors' repository (with reference/) or an autograder image that has "
        "it. A learner's copy grades the committed cases: drop --random");
  std::vector<std::vector<std::string>> calls;
  const std::vector<std::string> base = {make_fixtures.string(), "--random", std::to_string(count), "--seed",
                                         std::to_string(seed)};
  if (stages.size() == stage_table().size()) {
    calls.push_back(base);
  } else {
    for (const Stage* s : stages) {
      calls.push_back(base);
      calls.back().insert(calls.back().end(), {"--stage", s->slug});
    }
  }
  std::map<std::string, std::vector<Fixture>> out;
  try {
    for (const auto& call : calls) read_fixture_lines(run_capturing(call), stages, seed, out);
  } catch (const FixtureError& e) {
    throw std::runtime_error(std::string("the course is broken: ") + e.what());
  }
  for (const Stage* s : stages)
    if (out[s->slug].size() != size_t(count))
      throw std::runtime_error("make-fixtures drew " + std::to_string(out[s->slug].size()) + " cases of stage " +
                               s->slug + ", not " + std::to_string(count));
  return out;
}

}  // namespace course
