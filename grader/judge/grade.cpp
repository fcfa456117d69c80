#include "judge/grade.hpp"

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

// A case whose adapter must throw (a crop beyond the length): it passes only by throwing
// exactly the expected type.
void judge_expected_error(const std::string& expected_type, const std::string& status, const json& response,
                          CaseResult& r) {
  const std::string type = response.value("type", std::string());
  if (status == "exception" && type == expected_type) {
    r.status = CaseStatus::passed;
    return;
  }
  r.status = CaseStatus::failed;
  if (status == "exception")
    r.message = "expected " + expected_type + " to be thrown, got " + type + ": " + response.value("what", std::string());
  else
    r.message = "expected " + expected_type + " to be thrown; the code returned normally";
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
  json response;
  try {
    response = json::parse(ex.response);
  } catch (const json::exception&) {
    r.status = CaseStatus::runner_error;
    r.message = "the runner's answer is not JSON";
    return;
  }
  const std::string status = response.value("status", "");
  const std::string what = response.value("what", "");
  if (status == "not_implemented") {
    r.status = CaseStatus::not_implemented;
    r.message = "not implemented yet: " + what;
    return;
  }
  if (fx.expected.is_object() && fx.expected.size() == 1 && fx.expected.contains("error")) {
    judge_expected_error(fx.expected["error"].get<std::string>(), status, response, r);
    return;
  }
  if (status == "exception") {
    r.status = CaseStatus::exception;
    r.message = "the code under test threw " + response.value("type", std::string("an exception")) +
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
  r.message = r.mismatches.front().path + ": " + r.mismatches.front().summary;
  if (stage.diagnose) r.diagnoses = stage.diagnose(CaseView{fx, actual, r.mismatches});
}

}  // namespace

StageResult grade_stage(const Stage& stage, const GradeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // Load every fixture first: a broken one is an error of the course, not of the learner.
  std::vector<Fixture> fixtures;
  for (const auto& file : list_fixtures(options.fixtures_root / stage.slug)) {
    Fixture fx = load_fixture(file);
    if (fx.stage != stage.slug)
      throw FixtureError(file.string() + ": belongs to stage \"" + fx.stage + "\", not \"" + stage.slug + "\"");
    if (options.only_case.empty() || fx.name == options.only_case) fixtures.push_back(std::move(fx));
  }
  if (fixtures.empty()) throw FixtureError("stage " + stage.slug + " has no case named \"" + options.only_case + "\"");

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
