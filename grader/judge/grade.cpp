#include "judge/grade.hpp"

#include "judge/answer.hpp"
#include "judge/inputs.hpp"
#include "sandbox/process.hpp"
#include "wire/digest.hpp"

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

const char* origin_name(CaseOrigin o) {
  switch (o) {
    case CaseOrigin::visible: return "visible";
    case CaseOrigin::hidden: return "hidden";
    case CaseOrigin::random: return "random";
  }
  return "?";
}

int StageResult::passed() const {
  int n = 0;
  for (const auto& c : cases) n += c.status == CaseStatus::passed;
  return n;
}

namespace {

constexpr int kSetupTimeoutFactor = 6;  // a stage's setup (the weights) may take this many case timeouts

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
void judge(const Fixture& fx, const Exchange& ex, const GradeOptions& options, CaseResult& r) {
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
      r.message = "the runner's answer was cut off or malformed: " + ex.problem + "; the runner was stopped";
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
  if (const std::string type = expected_error_type(fx); !type.empty()) {
    judge_expected_error(type, status, response, r);
    // A normal return is an output like any other: its digest identifies a mistake.
    if (r.status == CaseStatus::failed && status == "ok" && response.contains("output"))
      r.digest = failed_answer_evidence(fx, response["output"]).digest;
    else if (r.status == CaseStatus::failed)
      r.digest = exception_digest(answer.type);
    return;
  }
  if (status == "exception") {
    r.status = CaseStatus::exception;
    r.message = "the code under test threw " + (answer.type.empty() ? std::string("an exception") : answer.type) +
                (what.empty() ? "" : ": " + what);
    r.digest = exception_digest(answer.type);  // what the catalogue records for a mistake that throws
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
    r.note = passed_answer_note(fx, actual);
    return;
  }
  r.status = CaseStatus::failed;
  const Mismatch& first = r.mismatches.front();
  r.message = first.path.empty() ? first.summary : first.path + ": " + first.summary;  // "" is the whole output
  AnswerEvidence evidence = failed_answer_evidence(fx, actual);
  r.digest = std::move(evidence.digest);
  r.where = std::move(evidence.where);
}

// The largest answer a case can need. A digest in the expected output stands for a full
// tensor in the answer (rows x row_size floats); every float gets 16 bytes, the longest
// a shortest-decimal float32 is written in, and the rest of the document twice its size,
// plus 1 MiB for a shape that differs. Larger is refused unread.
size_t answer_cap(const Fixture& fx) {
  size_t floats = 0;
  std::vector<const json*> todo = {&fx.expected};  // a walk without recursion
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_object() && j->contains("digest") && j->contains("rows") && (*j)["rows"].is_array() &&
        j->contains("row_size") && (*j)["row_size"].is_number_unsigned())
      floats += (*j)["rows"].size() * (*j)["row_size"].get<size_t>();
    else if (j->is_structured())
      for (const json& child : *j) todo.push_back(&child);
  }
  return 16 * floats + 2 * fx.expected.dump().size() + (1u << 20);
}

// Parsing and comparing the answer count against the case's time too.
void judge_within_budget(const Fixture& fx, const Exchange& ex, const GradeOptions& options,
                         CaseResult& r) {
  const auto t0 = std::chrono::steady_clock::now();
  judge(fx, ex, options, r);
  r.seconds = ex.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.seconds * 1000 > double(options.timeout.count()) && ex.outcome == Exchange::Outcome::response) {
    r.status = CaseStatus::timed_out;
    r.message = "the answer took more than " + seconds_text(options.timeout) + " to compute and check";
  }
}

// The stage's setup (the model's weights): answered "ok", or the reason it was not.
std::string setup_failure(const Fixture& fx, const Exchange& ex, const GradeOptions& options) {
  if (ex.outcome == Exchange::Outcome::response) {
    const Answer answer = parse_answer(ex.response);
    if (!answer.problem.empty()) return "the stage's setup got a malformed answer: " + answer.problem;
    if (answer.status == "ok") return "";
    if (!answer.what.empty()) return "the stage's setup failed: " + answer.what;
    return "the stage's setup got an answer that is not \"ok\"";
  }
  GradeOptions setup_options = options;
  setup_options.timeout = kSetupTimeoutFactor * options.timeout;
  CaseResult r;
  judge(fx, ex, setup_options, r);
  return "while preparing the stage: " + r.message;
}

// Names the catalogued mistakes that agree with every graded case that has records (a
// random case has none: identify leaves it out), on each failed case with records.
void identify_mistakes(const std::vector<Fixture>& fixtures, StageResult& result) {
  std::vector<CaseEvidence> evidence;
  for (size_t i = 0; i < fixtures.size() && i < result.cases.size(); ++i) {
    const CaseResult& c = result.cases[i];
    evidence.push_back({&fixtures[i], c.status == CaseStatus::passed, c.digest});
  }
  result.identified = identify(evidence);
  for (size_t i = 0; i < fixtures.size() && i < result.cases.size(); ++i)
    if (result.cases[i].status != CaseStatus::passed && has_mistake_records(fixtures[i]))
      result.cases[i].diagnoses = result.identified;
}

// The stage's cases in one folder, or none when `optional` and the folder is missing.
std::vector<Fixture> folder_cases(const std::filesystem::path& dir, const std::string& slug, bool optional) {
  std::error_code ec;
  if (optional && !std::filesystem::exists(dir, ec)) return {};
  return load_stage_fixtures(dir, slug, "");
}

}  // namespace

StageCases stage_cases(const Stage& stage, const GradeOptions& options) {
  StageCases all;
  auto add = [&](std::vector<Fixture> fixtures, CaseOrigin origin) {
    for (Fixture& fx : fixtures) {
      all.fixtures.push_back(std::move(fx));
      all.origins.push_back(origin);
    }
  };
  add(folder_cases(options.fixtures_root / stage.slug, stage.slug, false), CaseOrigin::visible);
  if (!options.hidden_root.empty())
    add(folder_cases(options.hidden_root / stage.slug, stage.slug, true), CaseOrigin::hidden);
  if (auto it = options.random_cases.find(stage.slug); it != options.random_cases.end())
    add(it->second, CaseOrigin::random);
  if (options.only_case.empty()) return all;
  StageCases one;
  std::string names;
  for (size_t i = 0; i < all.fixtures.size(); ++i) {
    names += (names.empty() ? "" : ", ") + all.fixtures[i].name;
    if (all.fixtures[i].name != options.only_case) continue;
    one.fixtures.push_back(std::move(all.fixtures[i]));
    one.origins.push_back(all.origins[i]);
  }
  if (one.fixtures.empty())
    throw FixtureError("stage " + stage.slug + " has no case named \"" + options.only_case + "\". Its cases: " + names);
  return one;
}

std::vector<std::string> case_names(const Stage& stage, const std::filesystem::path& fixtures_root) {
  std::vector<std::string> names;
  for (const Fixture& fx : load_stage_fixtures(fixtures_root / stage.slug, stage.slug, ""))
    names.push_back(fx.name);
  return names;
}

StageResult grade_stage(const Stage& stage, const GradeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // Load and check every fixture first: a broken one is an error of the course, not of the learner.
  const StageCases cases = stage_cases(stage, options);
  const std::vector<Fixture>& fixtures = cases.fixtures;

  StageResult result;
  result.stage = &stage;
  RunnerProcess runner(options.runner, options.sandbox);
  bool need_setup = !stage.setup.empty();
  std::string setup_failed;  // once the setup failed, it is not tried again
  for (size_t i = 0; i < fixtures.size(); ++i) {
    const Fixture& fx = fixtures[i];
    CaseResult r;
    r.name = fx.name;
    r.origin = cases.origins[i];
    r.checks = fx.checks;
    // A hidden case's input never leaves the grader: not in any report or results format.
    r.input_summary = r.origin == CaseOrigin::hidden ? kHiddenInput : short_json(fx.input);
    if (r.origin == CaseOrigin::random)
      r.replay = options.random_replay + " --stage " + stage.slug + " --case " + fx.name;
    if (need_setup && setup_failed.empty() && !runner.running()) {
      // Shared state (weights) is prepared once per runner process, with its own time.
      Exchange setup = runner.exchange(json{{"type", "setup"}, {"setup", stage.setup}}.dump(),
                                       kSetupTimeoutFactor * options.timeout);
      setup_failed = setup_failure(fx, setup, options);
      if (!setup_failed.empty()) {
        r.output = setup.output;
        r.output_truncated = setup.output_truncated;
      }
    }
    if (!setup_failed.empty()) {
      r.status = CaseStatus::runner_error;
      r.message = setup_failed;
      result.cases.push_back(std::move(r));
      continue;
    }
    json request = {{"type", "case"}, {"case", fx.name}, {"adapter", fx.adapter}, {"input", fx.input}};
    Exchange ex = runner.exchange(request.dump(), options.timeout, answer_cap(fx));
    judge_within_budget(fx, ex, options, r);
    result.cases.push_back(std::move(r));
  }
  runner.stop();
  identify_mistakes(fixtures, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace course
