#include "gen/mistake_runs.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "judge/compare.hpp"
#include "judge/stages.hpp"
#include "sandbox/process.hpp"
#include "wire/digest.hpp"

namespace fs = std::filesystem;

namespace course {

namespace {

constexpr std::chrono::milliseconds kCaseTimeout{120000};

std::map<std::string, std::string> header_of(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  std::map<std::string, std::string> h;
  for (std::string line; std::getline(in, line) && line.rfind("@@", 0) != 0;) {
    auto colon = line.find(": ");
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    h[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return h;
}

// One variant's answer to one case: its output, or why there is none.
struct Answer {
  bool ok = false;
  json output;
  std::string thrown;  // the exception's type, when it threw (unexpectedly) instead of returning
  std::string problem;
};

std::vector<Answer> run_variant(const VariantFile& v, const Stage& stage,
                                const std::vector<Fixture>& fixtures) {
  std::vector<Answer> answers;
  RunnerProcess runner(v.runner.string());
  for (const Fixture& fx : fixtures) {
    Answer a;
    if (!stage.setup.empty() && !runner.running()) {
      Exchange setup =
          runner.exchange(json{{"type", "setup"}, {"setup", stage.setup}}.dump(), kCaseTimeout);
      if (setup.outcome != Exchange::Outcome::response) {
        a.problem = "its setup failed (" + setup.death + ")";
        answers.push_back(std::move(a));
        continue;
      }
    }
    json request = {{"type", "case"}, {"case", fx.name}, {"adapter", fx.adapter}, {"input", fx.input}};
    Exchange ex = runner.exchange(request.dump(), kCaseTimeout);
    if (ex.outcome != Exchange::Outcome::response) {
      a.problem =
          ex.outcome == Exchange::Outcome::timeout || ex.outcome == Exchange::Outcome::cpu_limit
              ? "it timed out"
              : "it " + ex.death;
    } else {
      json response = json::parse(ex.response, nullptr, false);
      const std::string error = expected_error_type(fx);
      if (response.is_object() && response.value("status", "") == "ok" && response.contains("output")) {
        a.ok = true;
        a.output = std::move(response["output"]);
      } else if (!error.empty() && response.is_object() && response.value("status", "") == "exception" &&
                 response.value("type", "") == error) {
        a.ok = true;  // threw what the case expects: its output is the expected one
        a.output = fx.expected;
      } else if (response.is_object() && response.value("status", "") == "exception") {
        a.ok = true;  // a mistake may throw where the reference does not: recorded by the type
        a.thrown = response.value("type", "");
      } else {
        a.problem = "it answered " + short_json(response);
      }
    }
    answers.push_back(std::move(a));
  }
  runner.stop();
  return answers;
}

std::string record_output(const Fixture& fx, const Answer& a) {
  if (!a.thrown.empty()) return exception_digest(a.thrown);
  if (compare_outputs(fx.expected, a.output).empty()) return kMistakePasses;
  return output_digest(fx.expected, a.output);
}

std::string describe(const VariantFile& v) {
  return v.name + " (" + v.id + (v.parameter.empty() ? "" : ", " + v.parameter) + ")";
}

}  // namespace

std::vector<VariantFile> read_variant_files(const fs::path& dir, const fs::path& runners_dir) {
  std::vector<VariantFile> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const std::string ext = file.extension().string();
    if (ext != ".mistake" && ext != ".alternative") continue;
    auto h = header_of(file);
    VariantFile v;
    v.name = file.stem().string();
    v.mistake = ext == ".mistake";
    v.stage = h["stage"];
    v.id = h["diagnosis"];
    v.parameter = h["parameter"];
    v.runner = runners_dir / ((v.mistake ? "runner-buggy-" : "runner-alternative-") + v.name);
    if (v.stage.empty()) throw std::runtime_error(file.string() + ": no \"stage:\" line");
    if (v.mistake && v.id.empty()) throw std::runtime_error(file.string() + ": no \"diagnosis:\" line");
    if (!fs::exists(v.runner))
      throw std::runtime_error(v.runner.string() + " is not built (cmake --build build)");
    for (const VariantFile& earlier : out)
      if (v.mistake && earlier.mistake && earlier.id == v.id && earlier.parameter == v.parameter)
        throw std::runtime_error(file.string() + ": " + earlier.name + " already has diagnosis " +
                                 v.id + (v.parameter.empty() ? "" : " with parameter " + v.parameter));
    out.push_back(std::move(v));
  }
  return out;
}

void record_mistakes(const std::string& stage_slug, const std::vector<VariantFile>& all,
                     std::vector<Fixture>& fixtures, int jobs, bool prove_catalogue) {
  const Stage* stage = find_stage(stage_slug);
  if (!stage) throw std::runtime_error("no stage " + stage_slug + " in stages/manifest.json");
  std::vector<const VariantFile*> variants;
  for (const VariantFile& v : all)
    if (v.stage == stage_slug) variants.push_back(&v);

  // Each variant in its own runner process, `jobs` of them at a time.
  std::vector<std::vector<Answer>> answers(variants.size());
  std::vector<std::string> errors(variants.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < variants.size();) {
      try {
        answers[i] = run_variant(*variants[i], *stage, fixtures);
      } catch (const std::exception& e) {
        errors[i] = variants[i]->runner.string() + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) throw std::runtime_error(e);

  std::vector<std::string> problems;
  std::map<std::vector<std::string>, std::vector<std::string>> by_answers;  // records -> names
  for (size_t i = 0; i < variants.size(); ++i) {
    const VariantFile& v = *variants[i];
    std::vector<std::string> records;
    for (size_t c = 0; c < fixtures.size(); ++c) {
      const Answer& a = answers[i][c];
      if (!a.ok) {
        if (!prove_catalogue) continue;
        problems.push_back(v.name + " gives no output for case " + fixtures[c].name + ": " + a.problem);
        continue;
      }
      records.push_back(record_output(fixtures[c], a));
      if (!v.mistake && records.back() != kMistakePasses)
        problems.push_back("the alternative " + v.name + " fails case " + fixtures[c].name + ": " +
                           compare_outputs(fixtures[c].expected, a.output).front().summary);
      if (v.mistake) fixtures[c].mistakes.push_back({v.id, v.parameter, records.back()});
    }
    if (!v.mistake || records.size() != fixtures.size() || !prove_catalogue) continue;
    if (std::all_of(records.begin(), records.end(), [](const std::string& r) { return r == kMistakePasses; }))
      problems.push_back("the mistake " + describe(v) + " passes every case of " + stage_slug +
                         ": add a case that catches it");
    by_answers[records].push_back(describe(v));
  }
  for (const auto& [records, names] : by_answers) {
    if (names.size() < 2) continue;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    problems.push_back("no case of " + stage_slug + " tells these mistakes apart: " + list +
                       ". Add a case on which their outputs differ");
  }
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    throw std::runtime_error("the catalogue of mistakes does not hold:" + text);
  }
}

}  // namespace course
