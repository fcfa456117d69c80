#include "judge/grade.hpp"

#include "judge/answer.hpp"
#include "judge/inputs.hpp"
#include "sandbox/process.hpp"

namespace course {

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::passed: return "passed";
    case CaseStatus::failed: return "failed";
    case CaseStatus::not_implemented: return "not_implemented";
    case CaseStatus::crashed: return "crashed";
    case CaseStatus::timed_out: return "timed_out";
    case CaseStatus::exception: return "exception";
    case CaseStatus::runner_error: return "runner_error";
  }
  return "?";
}

int StageResult::passed() const {
  int n = 0;
  for (const auto& c : cases) n += c.status == CaseStatus::passed;
  return n;
}

namespace {

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", double(ms.count()) / 1000.0);
  return buf;
}

// Turns one exchange with the runner into the case's verdict.
void judge(const Stage& stage, const Fixture& fx, const Exchange& ex, const GradeOptions& options, CaseResult& r) {
  r.output = ex.output;
  r.output_truncated = ex.output_truncated;
  r.seconds = ex.seconds;
  switch (ex.outcome) {
    case Exchange::Outcome::timeout:
      r.status = CaseStatus::timed_out;
      r.message = "no answer within " + seconds_text(options.timeout) +
                  " (an endless loop? `--timeout SECONDS` allows more); the runner was stopped";
      return;
    case Exchange::Outcome::died:
      r.status = CaseStatus::crashed;
      r.message = "the code under test " + ex.death;
      return;
    case Exchange::Outcome::broken:
      r.status = CaseStatus::runner_error;
      r.message = "the runner's answer was cut off or malformed" + (ex.death.empty() ? "" : " (it " + ex.death + ")");
      return;
    case Exchange::Outcome::response:
      break;
  }
  const Answer answer = parse_answer(ex.response);
  if (!answer.problem.empty()) {
    r.status = CaseStatus::runner_error;
    r.message = answer.problem;
    return;
  }
  const json& response = answer.document;
  const std::string& status = answer.status;
  const std::string& what = answer.what;
  if (status == "not_implemented") {
    r.status = CaseStatus::not_implemented;
    r.message = "not implemented yet: " + what;
    return;
  }
  if (status == "exception") {
    r.status = CaseStatus::exception;
    r.message = "the code under test threw " + (answer.type.empty() ? std::string("an exception") : answer.type) +
                (what.empty() ? "" : ": " + what);
    return;
  }
  if (status != "ok" || !response.contains("output")) {
    r.status = CaseStatus::runner_error;
    r.message = "the runner could not run this case: " + (what.empty() ? "status \"" + status + "\"" : what);
    return;
  }
  const json& actual = response["output"];
  r.mismatches = compare_outputs(fx.expected, actual);
  if (r.mismatches.empty()) {
    r.status = CaseStatus::passed;
    return;
  }
  r.status = CaseStatus::failed;
  const Mismatch& first = r.mismatches.front();
  r.message = first.path.empty() ? first.summary : first.path + ": " + first.summary;  // "" is the whole output
  if (stage.diagnose) r.diagnoses = diagnose_answer(stage.diagnose, CaseView{fx, actual, r.mismatches});
}

}  // namespace

StageResult grade_stage(const Stage& stage, const GradeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // Load and check every fixture first: a broken one is an error of the course, not of the learner.
  const std::vector<Fixture> fixtures =
      load_stage_fixtures(options.fixtures_root / stage.slug, stage.slug, options.only_case);

  StageResult result;
  result.stage = &stage;
  RunnerProcess runner(options.runner);
  bool need_setup = !stage.setup.empty();
  for (const Fixture& fx : fixtures) {
    CaseResult r;
    r.name = fx.name;
    r.checks = fx.checks;
    r.input_summary = short_json(fx.input);
    if (need_setup && !runner.running()) {
      // Shared state (weights) is prepared once per runner process, with its own time.
      Exchange setup = runner.exchange(json{{"type", "setup"}, {"setup", stage.setup}}.dump(), options.timeout * 6);
      if (setup.outcome != Exchange::Outcome::response) {
        judge(stage, fx, setup, options, r);
        r.message = "while preparing the stage: " + r.message;
        result.cases.push_back(std::move(r));
        continue;
      }
    }
    json request = {{"type", "case"}, {"case", fx.name}, {"adapter", fx.adapter}, {"input", fx.input}};
    Exchange ex = runner.exchange(request.dump(), options.timeout);
    judge(stage, fx, ex, options, r);
    result.cases.push_back(std::move(r));
  }
  runner.stop();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace course
