// Fuzz target: a runner's answer, through what the grader does with it (grade.cpp's
// judge): parse_answer, then, for an "ok" answer, compare_outputs against a fixture's
// expected output, and the digest, localization or work note (failed_answer_evidence,
// passed_answer_note). The first byte picks the
// case; the rest is the answer's JSON. Nothing here may throw or trip a sanitizer: the
// answer comes from the code under test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "judge/answer.hpp"
#include "judge/diagnose.hpp"
#include "judge/stages.hpp"
#include "wire/digest.hpp"

#ifndef KVCOURSE_SOURCE_DIR
#error "the build defines KVCOURSE_SOURCE_DIR"
#endif

namespace {

// A small digest case: expected logits [3, 8] kept as digests (as the decode stages keep
// theirs), with the answer tensor that matches them (fuzz/corpus/answer/ holds it).
course::Fixture digest_fixture() {
  course::Tensor t;
  t.shape = {3, 8};
  t.axes = {"step", "vocab"};
  for (int i = 0; i < 24; ++i) t.data.push_back(0.25f * float(i));
  course::Fixture f;
  f.file = "fuzz/digest.json";
  f.stage = "digest";
  f.name = "digest";
  f.adapter = "run_decode";
  f.input = {{"tokens", {1, 2, 3}}};
  f.expected = {{"logits", course::make_digest(t, course::spread_indices(8, 3), true)},
                {"cache_shapes", course::json::array()}};
  return f;
}

// Every stage's fixtures (the stages as the manifest lists them), and the small digest case.
std::vector<course::Fixture> load_cases() {
  const std::string root = std::string(KVCOURSE_SOURCE_DIR) + "/fixtures/";
  std::vector<course::Fixture> cases;
  for (const course::Stage& stage : course::stage_table())
    for (const auto& file : course::list_fixtures(root + stage.slug)) cases.push_back(course::load_fixture(file));
  cases.push_back(digest_fixture());
  return cases;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<course::Fixture> cases = load_cases();
  if (size == 0) return 0;
  const course::Fixture& fx = cases[data[0] % cases.size()];
  const course::Answer answer = course::parse_answer(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!answer.problem.empty() || answer.status != "ok" || !answer.document.contains("output")) return 0;
  const course::json& actual = answer.document["output"];
  const std::vector<course::Mismatch> mismatches = course::compare_outputs(fx.expected, actual);
  // As grade.cpp does; with KVCOURSE_FUZZ_STRICT=1, a helper that throws is a finding too.
  static const bool strict = std::getenv("KVCOURSE_FUZZ_STRICT") != nullptr;
  if (mismatches.empty()) {
    (void)(strict ? course::work_note(fx, actual) : course::passed_answer_note(fx, actual));
  } else if (strict) {
    (void)course::output_digest(fx.expected, actual);
    (void)course::localize(fx, actual);
  } else {
    (void)course::failed_answer_evidence(fx, actual);
  }
  return 0;
}
