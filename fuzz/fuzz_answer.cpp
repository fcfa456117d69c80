// Fuzz target: a runner's answer, through what the grader does with it (grade.cpp's
// judge): parse_answer, then, for an "ok" answer, compare_outputs against a fixture's
// expected output and the stage's diagnoses (diagnose_answer). The first byte picks the
// case; the rest is the answer's JSON. Nothing here may throw or trip a sanitizer: the
// answer comes from the code under test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "judge/answer.hpp"
#include "judge/diagnose.hpp"
#include "wire/digest.hpp"

#ifndef KVCOURSE_SOURCE_DIR
#error "the build defines KVCOURSE_SOURCE_DIR"
#endif

namespace {

struct Case {
  course::Fixture fixture;
  course::Diagnoser diagnose;
};

// A small digest case: expected logits [3, 8] kept as digests (as the decode stages keep
// theirs), with the answer tensor that matches them (fuzz/corpus/answer/ holds it).
course::Fixture digest_fixture() {
  course::Tensor t;
  t.shape = {3, 8};
  t.axes = {"step", "vocab"};
  for (int i = 0; i < 24; ++i) t.data.push_back(0.25f * float(i));
  course::Fixture f;
  f.file = "fuzz/digest.json";
  f.stage = "one-token";
  f.name = "digest";
  f.adapter = "run_decode";
  f.input = {{"tokens", {1, 2, 3}}};
  f.expected = {{"logits", course::make_digest(t, course::spread_indices(8, 3), true)},
                {"cache_shapes", course::json::array()}};
  return f;
}

std::vector<Case> load_cases() {
  const std::string root = std::string(KVCOURSE_SOURCE_DIR) + "/fixtures/";
  const std::pair<const char*, course::Diagnoser> files[] = {
      {"cache-structure/02-one-append.json", course::diagnose_cache_structure},
      {"multi-layer-cache/02-lesson-example.json", course::diagnose_multi_layer_cache},
      {"multi-layer-cache/06-clone-then-diverge.json", course::diagnose_multi_layer_cache},
      {"one-token/01-attend-one-position.json", course::diagnose_one_token},
      {"one-token/03-first-token.json", course::diagnose_one_token},
      {"prefill/03-one-token.json", course::diagnose_prefill},
  };
  std::vector<Case> cases;
  for (const auto& [file, diagnose] : files) cases.push_back({course::load_fixture(root + file), diagnose});
  cases.push_back({digest_fixture(), course::diagnose_one_token});
  cases.push_back({digest_fixture(), course::diagnose_prefix_reuse});
  return cases;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Case> cases = load_cases();
  if (size == 0) return 0;
  const Case& c = cases[data[0] % cases.size()];
  const course::Answer answer = course::parse_answer(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!answer.problem.empty() || answer.status != "ok" || !answer.document.contains("output")) return 0;
  const course::json& actual = answer.document["output"];
  const std::vector<course::Mismatch> mismatches = course::compare_outputs(c.fixture.expected, actual);
  if (mismatches.empty()) return 0;
  const course::CaseView view{c.fixture, actual, mismatches};
  // As grade.cpp does; with KVCOURSE_FUZZ_STRICT=1, a detector that throws is a finding too.
  static const bool strict = std::getenv("KVCOURSE_FUZZ_STRICT") != nullptr;
  (void)(strict ? c.diagnose(view) : course::diagnose_answer(c.diagnose, view));
  return 0;
}
