#include "judge/grade.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "judge/adapter_rules.hpp"
#include "judge/answer.hpp"
#include "judge/localize.hpp"
#include "judge/stage_fixtures.hpp"
#include "synthetic_file_header.hpp"  // model/include: the weights file's header, header-only
#include "sandbox/crash.hpp"
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

constexpr int kSetupFactor = 6;  // with --timeout, a stage's setup may take this many case budgets

std::string fixed1(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

// Where a case's CPU budget comes from, for its message.
std::string budget_origin(const CaseBudget& b) {
  if (!b.derived) return "set by --timeout";
  char buf[200];
  if (b.model_rows == 0)
    std::snprintf(buf, sizeof buf, "%.0f CPU-s: the reference puts nothing through the model",
                  kCaseCpuFloor);
  else if (b.model_rows > 0)
    std::snprintf(buf, sizeof buf,
                  "%.0f CPU-s, plus %.2f for each of the %lld rows the reference puts through "
                  "GPT-2 small",
                  kCaseCpuFloor, kCpuPerModelRow, static_cast<long long>(b.model_rows));
  else
    std::snprintf(
        buf, sizeof buf,
        "%.0f CPU-s, plus %.2f for each of the %lld token ids and list entries of its input",
        kCaseCpuFloor, kCpuPerToken, static_cast<long long>(b.tokens));
  return buf;
}

// The thread's own CPU time, in seconds: what judging an answer costs the grader.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Where the code under test threw, to follow its type in a message: " in F (file:line),
// called from G (file:line)" (sandbox/crash.hpp), or why no place can be named.
std::string thrown_where(const Answer& answer, const std::string& executable) {
  if (!answer.thrown_at.empty()) {
    const std::string where = locate_frames(executable, answer.thrown_at, false);
    return where.empty()
               ? " (where it was thrown, no function of the code under test is on the stack)"
               : " " + where;
  }
  if (answer.thrown_unrecorded == "not_found")
    return " (no stack was kept where it was thrown: it was thrown on another thread, or made "
           "without a throw)";
  if (answer.thrown_unrecorded == "off")
    return " (this runner does not record where exceptions are thrown)";
  return "";
}

// A case whose adapter must throw (a crop beyond the length): it passes only by throwing
// exactly the expected type.
void judge_expected_error(const std::string& expected_type, const Answer& answer,
                          const std::string& executable, CaseResult& r) {
  const std::string& status = answer.status;
  const json& response = answer.document;
  const std::string type = response.value("type", std::string());
  if (status == "exception" && type == expected_type) {
    r.status = CaseStatus::passed;
    return;
  }
  r.status = CaseStatus::failed;
  if (status == "exception")
    r.message = "expected " + expected_type + " to be thrown, got " + type +
                thrown_where(answer, executable) + ": " + response.value("what", std::string());
  else
    r.message = "expected " + expected_type + " to be thrown; the code returned normally";
}

// Turns one exchange with the runner into the case's verdict.
void judge(const Fixture& fx, const Exchange& ex, const CaseBudget& budget,
           const std::string& executable, CaseResult& r) {
  r.output = ex.output;
  r.output_truncated = ex.output_truncated;
  r.seconds = ex.seconds;
  switch (ex.outcome) {
    case Exchange::Outcome::cpu_limit:
      r.status = CaseStatus::timed_out;
      r.message =
          "no answer after " + fixed1(ex.cpu_seconds) + " CPU-s of the " +
          fixed1(budget.budget.cpu_seconds) + " allowed (" + budget_origin(budget) +
          "): an endless loop? (`--timeout SECONDS` sets another budget); the runner was stopped";
      return;
    case Exchange::Outcome::timeout:
      r.status = CaseStatus::timed_out;
      r.message =
          "no answer after waiting " + fixed1(ex.seconds) + " s, while the runner used " +
          (ex.cpu_seconds < 0 ? std::string("an unknown amount of") : fixed1(ex.cpu_seconds)) +
          " CPU-s of the " + fixed1(budget.budget.cpu_seconds) +
          " allowed: blocked or sleeping? the runner was stopped";
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
    judge_expected_error(type, answer, executable, r);
    // A normal return is an output like any other: its digest identifies a mistake.
    if (r.status == CaseStatus::failed && status == "ok" && response.contains("output"))
      r.digest = failed_answer_evidence(fx, response["output"]).digest;
    else if (r.status == CaseStatus::failed)
      r.digest = exception_digest(answer.type);
    return;
  }
  if (status == "exception") {
    r.status = CaseStatus::exception;
    r.message = "the code under test threw " +
                (answer.type.empty() ? std::string("an exception") : answer.type) +
                thrown_where(answer, executable) + (what.empty() ? "" : ": " + what);
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
// a shortest-decimal float32 is written in, and the rest of the document twice the most
// its text can take, plus 1 MiB for a shape that differs. Larger is refused unread. The
// text's bound is counted, not written (writing the fixture's samples out was 5% of a
// stage's grading): a number takes at most 25 bytes, a string or key six per byte (a
// \u escape) and two quotes, and every value a separator.
size_t answer_cap(const Fixture& fx) {
  size_t floats = 0;
  size_t text = 0;
  std::vector<const json*> todo = {&fx.expected};  // a walk without recursion
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    text += 2;
    if (j->is_object() && j->contains("digest") && j->contains("rows") && (*j)["rows"].is_array() &&
        j->contains("row_size") && (*j)["row_size"].is_number_unsigned())
      floats += (*j)["rows"].size() * (*j)["row_size"].get<size_t>();
    if (j->is_object())
      for (const auto& [key, child] : j->items()) {
        text += 6 * key.size() + 3;
        todo.push_back(&child);
      }
    else if (j->is_array())
      for (const json& child : *j) todo.push_back(&child);
    else if (j->is_string())
      text += 6 * j->get_ref<const std::string&>().size();
    else
      text += 25;
  }
  return 16 * floats + 2 * text + (1u << 20);
}

// Parsing and comparing the answer count against the case's CPU budget too.
void judge_within_budget(const Fixture& fx, const Exchange& ex, const CaseBudget& budget,
                         const std::string& executable, CaseResult& r) {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();
  judge(fx, ex, budget, executable, r);
  r.seconds = ex.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = std::max(0.0, ex.cpu_seconds) + thread_cpu_seconds() - cpu0;
  if (cpu > budget.budget.cpu_seconds && ex.outcome == Exchange::Outcome::response) {
    r.status = CaseStatus::timed_out;
    r.message = "the answer took " + fixed1(cpu) + " CPU-s to compute and check, more than the " +
                fixed1(budget.budget.cpu_seconds) + " allowed (" + budget_origin(budget) + ")";
  }
}

// The weights file for the stage's setup, when the build wrote one (GradeOptions::
// weights_dir). Its header is checked here (format, seed, size), its contents by the
// runner that maps it (gpt2::map_synthetic_file). Throws std::runtime_error for a
// file that is there but not those weights: an error of the course's build.
std::optional<sandbox::SharedFile> weights_file(const Stage& stage, const GradeOptions& options) {
  if (options.weights_dir.empty() || !stage.setup.is_object() || !stage.setup.contains("weights"))
    return {};
  const json& w = stage.setup["weights"];
  if (!w.is_object() || w.value("kind", "") != "synthetic" ||
      w.value("config", "") != "gpt2-small" || !w.contains("seed") ||
      !w["seed"].is_number_unsigned())
    return {};
  const uint64_t seed = w["seed"].get<uint64_t>();
  const std::string name = "gpt2-small-" + std::to_string(seed) + ".weights";
  const std::filesystem::path file = options.weights_dir / name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return {};
  const uintmax_t size = std::filesystem::file_size(file, ec);
  gpt2::synthetic_file::Header header{};
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  std::string problem;
  if (!in || !gpt2::synthetic_file::has_magic(header))
    problem = "not a synthetic weights file of this format";
  else if (header.seed != seed)
    problem = "made for seed " + std::to_string(header.seed);
  else if (ec || size != gpt2::synthetic_file::file_bytes(header))
    problem = "its size is not its header's: cut off?";
  if (!problem.empty())
    throw std::runtime_error(
        "the weights file " + file.string() + " is broken (" + problem +
        "); the build writes it again: cmake --build <build folder> --target weights");
  return sandbox::SharedFile{std::filesystem::absolute(file).string(), "/weights/" + name};
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
  CaseBudget budget;
  budget.budget = setup_budget(options);
  budget.derived = false;
  CaseResult r;
  judge(fx, ex, budget, options.runner, r);
  if (ex.outcome == Exchange::Outcome::cpu_limit)  // not a case's budget: say whose
    r.message = "no answer after " + fixed1(ex.cpu_seconds) + " CPU-s of the " +
                fixed1(budget.budget.cpu_seconds) +
                " the stage's setup may use: an endless loop? the runner was stopped";
  return "while preparing the stage: " + r.message;
}

// The request that has the runner answer case `fx` on `input` (its own, or a cut-short one).
std::string case_request(const Fixture& fx, const json& input) {
  const json request = {
      {"type", "case"}, {"case", fx.name}, {"adapter", fx.adapter}, {"input", input}};
  return request.dump();
}

// A failed case run again on cut-short inputs, in the same runner, each run within the
// case's own budget, to name the step after which the learner's state departs from the
// rules (the adapter's rules say whether and how: judge/adapter_rules.hpp, e.g. a paged
// plan's locate_paged_plan_divergence). The runs' words go after the case's other where:
// lines; a run with no output ends it, saying nothing.
void locate_by_runs(const Fixture& fx, const Exchange& ex, const CaseBudget& budget,
                    RunnerProcess& runner, CaseResult& r) {
  const AdapterRules* rules = adapter_rules(fx.adapter);
  if (!rules || !rules->locate_by_runs) return;
  if (ex.outcome != Exchange::Outcome::response) return;
  const Answer answer = parse_answer(ex.response);
  if (!answer.problem.empty() || answer.status != "ok" || !answer.document.contains("output"))
    return;
  const PlanRunner run = [&](const json& input) -> std::optional<json> {
    const Exchange probe = runner.exchange(case_request(fx, input), budget.budget, answer_cap(fx));
    if (probe.outcome != Exchange::Outcome::response) return std::nullopt;
    const Answer a = parse_answer(probe.response);
    if (!a.problem.empty() || a.status != "ok" || !a.document.contains("output"))
      return std::nullopt;
    return a.document["output"];
  };
  try {
    for (std::string& line : rules->locate_by_runs(fx, answer.document["output"], run))
      r.where.push_back(std::move(line));
  } catch (const std::exception&) {
    // A malformed answer to a run: nothing more is said.
  }
}

// The runs locate_by_runs may make of a failed case (0: it makes none).
int divergence_runs(const Fixture& fx) {
  const AdapterRules* rules = adapter_rules(fx.adapter);
  return rules && rules->replay_runs && rules->locate_by_runs ? rules->replay_runs(fx) : 0;
}

// A failed case's outputs, for the HTML report: the fixture's and the code under test's.
bool keep_outputs(const Fixture& fx, const Exchange& ex, CaseResult& r) {
  if (ex.outcome != Exchange::Outcome::response) return false;
  const Answer answer = parse_answer(ex.response);
  if (!answer.problem.empty() || !answer.document.contains("output")) return false;
  r.expected_output = fx.expected;
  r.actual_output = answer.document["output"];
  return true;
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

int64_t input_tokens(const json& input) {
  int64_t n = 0;
  std::vector<const json*> todo = {&input};  // a walk without recursion
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_array()) {
      for (const json& x : *j)
        if (x.is_number_integer())
          ++n;
        else if (x.is_structured())
          todo.push_back(&x);
    } else if (j->is_object()) {
      for (const json& x : *j)
        if (x.is_structured()) todo.push_back(&x);
      const auto it = j->find("max_new_tokens");
      if (it != j->end() && it->is_number_integer() && it->get<int64_t>() > 0) {
        const auto suffixes = j->find("suffixes");
        const int64_t times =
            suffixes != j->end() && suffixes->is_array() ? int64_t(suffixes->size()) : 1;
        n += std::min<int64_t>(it->get<int64_t>(), 1 << 20) * std::max<int64_t>(1, times);
      }
    }
  }
  return n;
}

namespace {

std::chrono::milliseconds wall_for(double cpu_seconds, double at_least) {
  return std::chrono::milliseconds(
      static_cast<long long>(std::max(at_least, kWallFactor * cpu_seconds) * 1000));
}

}  // namespace

CaseBudget case_budget(const Fixture& fx, const GradeOptions& options) {
  CaseBudget b;
  if (options.explicit_cpu_seconds > 0) {
    b.derived = false;
    b.budget = {options.explicit_cpu_seconds, wall_for(options.explicit_cpu_seconds, 0)};
    return b;
  }
  double cpu = kCaseCpuFloor;
  if (fx.model_rows >= 0) {
    b.model_rows = fx.model_rows;
    cpu += kCpuPerModelRow * double(fx.model_rows);
  } else {  // a fixture that does not record its work: counted from its input
    b.tokens = input_tokens(fx.input);
    cpu += kCpuPerToken * double(b.tokens);
  }
  cpu = std::min(kCaseCpuCeiling, cpu);
  b.budget = {cpu, wall_for(cpu, 60)};
  return b;
}

Budget setup_budget(const GradeOptions& options) {
  if (options.explicit_cpu_seconds > 0) {
    const double cpu = kSetupFactor * options.explicit_cpu_seconds;
    return {cpu, wall_for(cpu, 0)};
  }
  return {kSetupCpuSeconds, wall_for(kSetupCpuSeconds, 60)};
}

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
  StageResult result = grade_cases(stage, stage_cases(stage, options), options);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

namespace {

// One case's verdict as a runner gave it, before it takes its place in the stage's
// results (Emitter::emit).
struct Graded {
  CaseResult result;
  bool setup_failed = false;  // the stage's setup failed in this case's runner
  bool kept_outputs = false;  // result holds the outputs for the HTML report
};

// What the runners of one stage share: the cases, the options, the runner's
// configuration, and whether the stage's setup has failed already.
struct StageGrader {
  StageGrader(const Stage& s, const StageCases& c, const GradeOptions& o)
      : stage(s), cases(c), options(o), config(o.sandbox), weights(weights_file(s, o)) {}
  const Stage& stage;
  const StageCases& cases;
  const GradeOptions& options;
  sandbox::Config config;
  std::optional<sandbox::SharedFile> weights;
  std::mutex lock;           // over setup_failed
  std::string setup_failed;  // once the setup failed, it is not tried again
  // The first case, in case order, known to keep its outputs for the report: the later
  // ones need not.
  std::atomic<size_t> first_kept{SIZE_MAX};
};

// One runner and the cases it grades, one at a time.
class Lane {
 public:
  Lane(StageGrader& g, int slot) : g_(g), runner_(g.options.runner, config_for(g.config, slot)) {}

  Graded grade(size_t i) {
    const Fixture& fx = g_.cases.fixtures[i];
    const GradeOptions& options = g_.options;
    Graded out;
    CaseResult& r = out.result;
    r.name = fx.name;
    r.origin = g_.cases.origins[i];
    r.checks = fx.checks;
    // A hidden case's input never leaves the grader: not in any report or results format.
    r.input_summary = r.origin == CaseOrigin::hidden ? kHiddenInput : short_json(fx.input);
    if (r.origin == CaseOrigin::random)
      r.replay = options.random_replay + " --stage " + g_.stage.slug + " --case " + fx.name;
    if (!g_.stage.setup.empty()) {
      std::string failed = shared_setup_failure();
      if (failed.empty() && !runner_.running()) {
        // Shared state (weights) is prepared once per runner process, with its own time.
        runner_.start();
        json setup_request = {{"type", "setup"}, {"setup", g_.stage.setup}};
        if (g_.weights)
          setup_request["setup"]["weights_file"] =
              sandbox::runner_path(runner_.isolation(), *g_.weights);
        Exchange setup = runner_.exchange(setup_request.dump(), setup_budget(options));
        failed = setup_failure(fx, setup, options);
        if (!failed.empty()) {
          r.output = setup.output;
          r.output_truncated = setup.output_truncated;
          std::lock_guard<std::mutex> hold(g_.lock);
          if (g_.setup_failed.empty()) g_.setup_failed = failed;
        }
      }
      if (!failed.empty()) {
        r.status = CaseStatus::runner_error;
        r.message = failed;
        out.setup_failed = true;
        return out;
      }
    }
    const CaseBudget budget = case_budget(fx, options);
    Exchange ex = runner_.exchange(case_request(fx, fx.input), budget.budget, answer_cap(fx));
    judge_within_budget(fx, ex, budget, options.runner, r);
    if (r.status == CaseStatus::passed && is_timed(fx)) time_against_baseline(fx, ex, r);
    if (r.status == CaseStatus::failed && r.origin != CaseOrigin::hidden && divergence_runs(fx) > 0)
      locate_by_runs(fx, ex, budget, runner_, r);
    // A hidden case's outputs, like its input, never leave the grader.
    if (options.keep_failed_outputs && r.status == CaseStatus::failed &&
        r.origin != CaseOrigin::hidden && i < g_.first_kept && keep_outputs(fx, ex, r)) {
      out.kept_outputs = true;
      for (size_t kept = g_.first_kept;
           i < kept && !g_.first_kept.compare_exchange_weak(kept, i);) {
      }
    }
    return out;
  }

  void stop() { runner_.stop(); }

 private:
  // A timed case that passed: the runner's CPU time for it beside the model's own loop's
  // on the same input, run right after (judge/speed.hpp).
  void time_against_baseline(const Fixture& fx, const Exchange& ex, CaseResult& r) {
    if (g_.options.speed_baseline.empty()) {
      r.speed_problem = "this grader was not given the speed-baseline program";
      return;
    }
    if (!g_.weights) {
      r.speed_problem = "there is no weights file for the model's own loop to map (the build writes it)";
      return;
    }
    if (ex.cpu_seconds <= 0) {
      r.speed_problem = "the runner's CPU time could not be read";
      return;
    }
    SpeedSample sample;
    sample.learner_cpu_s = ex.cpu_seconds;
    const uint64_t seed = g_.stage.setup["weights"]["seed"].get<uint64_t>();
    r.speed_problem = run_speed_baseline(g_.options.speed_baseline, g_.weights->source, seed, fx, sample);
    if (r.speed_problem.empty()) r.speed = sample;
  }

  static sandbox::Config config_for(sandbox::Config config, int slot) {
    config.slot = slot;
    return config;
  }
  std::string shared_setup_failure() {
    std::lock_guard<std::mutex> hold(g_.lock);
    return g_.setup_failed;
  }

  StageGrader& g_;
  RunnerProcess runner_;
};

// How many runners grade the stage: GradeOptions::jobs, at most one per case, and no
// more than the sandbox has room for (the uid mode: a uid each).
int lane_count(const GradeOptions& options, size_t cases) {
  int lanes = std::max(1, std::min(options.jobs, int(std::min<size_t>(cases, 1024))));
  if (lanes > 1) lanes = std::min(lanes, sandbox::probe(options.sandbox.mode).slots());
  return lanes;
}

// Adds the verdicts to the stage's results in case order, as one runner would have given
// them: after the stage's setup failed, every later case says the first failure's words
// (without its runner's output, shown once), and only the first failed case keeps its
// outputs for the report.
class Emitter {
 public:
  Emitter(StageResult& result, const GradeOptions& options) : result_(result), options_(options) {}

  void emit(Graded g) {
    CaseResult& r = g.result;
    if (g.setup_failed) {
      if (setup_message_.empty()) {
        setup_message_ = r.message;
      } else {
        r.message = setup_message_;
        r.output.clear();
        r.output_truncated = false;
      }
    }
    if (g.kept_outputs && kept_outputs_) r.expected_output = r.actual_output = json();
    kept_outputs_ = kept_outputs_ || g.kept_outputs;
    result_.cases.push_back(std::move(r));
    if (options_.on_case && result_.partial()) options_.on_case(result_);
  }

 private:
  StageResult& result_;
  const GradeOptions& options_;
  std::string setup_message_;
  bool kept_outputs_ = false;
};

// The cases over `lanes` runners, one thread each: lane k starts with case k, then each
// lane takes the next case not taken yet. This thread adds each verdict as soon as every
// case before it has one. An error that stops a lane (a runner that cannot start) stops
// the others after their current case and is thrown here once they are done.
void grade_in_lanes(StageGrader& g, int lanes, Emitter& emitter) {
  const size_t n = g.cases.fixtures.size();
  std::vector<std::optional<Graded>> done(n);
  std::mutex lock;
  std::condition_variable ready;
  std::exception_ptr error;
  std::atomic<size_t> next{size_t(lanes)};
  std::atomic<bool> stopping{false};
  auto work = [&](int slot) {
    try {
      Lane lane(g, slot);
      for (size_t i = size_t(slot); i < n && !stopping; i = next++) {
        Graded graded = lane.grade(i);
        std::lock_guard<std::mutex> hold(lock);
        done[i] = std::move(graded);
        ready.notify_all();
      }
      lane.stop();
    } catch (...) {
      std::lock_guard<std::mutex> hold(lock);
      if (!error) error = std::current_exception();
      stopping = true;
      ready.notify_all();
    }
  };
  std::vector<std::thread> threads;
  struct Join {  // also when emit throws: no thread outlives this function
    std::vector<std::thread>& threads;
    std::atomic<bool>& stopping;
    ~Join() {
      stopping = true;
      for (std::thread& t : threads)
        if (t.joinable()) t.join();
    }
  } join{threads, stopping};
  for (int slot = 0; slot < lanes; ++slot) threads.emplace_back(work, slot);
  for (size_t i = 0; i < n; ++i) {
    std::unique_lock<std::mutex> hold(lock);
    ready.wait(hold, [&] { return done[i].has_value() || error; });
    if (!done[i]) break;
    Graded graded = std::move(*done[i]);
    done[i].reset();
    hold.unlock();
    emitter.emit(std::move(graded));
  }
  stopping = true;
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

StageResult grade_cases(const Stage& stage, const StageCases& cases, const GradeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Fixture>& fixtures = cases.fixtures;

  StageResult result;
  result.stage = &stage;
  result.expected_cases = fixtures.size();
  StageGrader g(stage, cases, options);
  if (g.weights) g.config.files.push_back(*g.weights);
  // A runner may serve the whole stage: its CPU limit (the kernel's backstop behind each
  // case's budget) is the setup's and every case's together.
  double stage_cpu = stage.setup.empty() ? 0 : setup_budget(options).cpu_seconds;
  for (const Fixture& fx : fixtures)
    stage_cpu += (1 + divergence_runs(fx)) * case_budget(fx, options).budget.cpu_seconds;
  g.config.limits.cpu_seconds =
      std::max<uint64_t>(g.config.limits.cpu_seconds, uint64_t(std::ceil(stage_cpu)) + 10);
  Emitter emitter(result, options);
  const int lanes = lane_count(options, fixtures.size());
  if (lanes > 1) {
    grade_in_lanes(g, lanes, emitter);
  } else {
    Lane lane(g, 0);
    for (size_t i = 0; i < fixtures.size(); ++i) emitter.emit(lane.grade(i));
    lane.stop();
  }
  identify_mistakes(fixtures, result);
  if (std::any_of(fixtures.begin(), fixtures.end(), is_timed)) {
    // The verdict sums up the visible timed cases, so it comes right after the visible
    // cases, before the hidden and random ones (which are not timed).
    SpeedSummary summary;
    CaseResult verdict = speed_verdict(fixtures, result.cases, summary);
    const auto visible = std::count(cases.origins.begin(), cases.origins.end(), CaseOrigin::visible);
    result.cases.insert(result.cases.begin() + std::min<std::ptrdiff_t>(visible, std::ptrdiff_t(result.cases.size())),
                        std::move(verdict));
    result.speed = summary;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace course
