// Diagnoses: when a failing case looks like a known mistake, say which one, with a stable
// id and the lesson section that explains it. Detectors only look at the case's input,
// the expected output and the learner's output; they never run code.
#pragma once

#include <string>
#include <vector>

#include "judge/compare.hpp"
#include "wire/fixture.hpp"

namespace course {

struct Diagnosis {
  std::string id;           // stable, e.g. "kvc.transposed_layout"
  std::string title;        // a few words
  std::string explanation;  // what in this case's output points to it
  std::string lesson;       // "stages/01-cache-structure/lesson.md#transposed-layout"
};

struct CaseView {
  const Fixture& fixture;
  const json& actual;
  const std::vector<Mismatch>& mismatches;
};

using Diagnoser = std::vector<Diagnosis> (*)(const CaseView&);

// One entry per known mistake; `id`, `title` and `lesson` of every Diagnosis come from here.
struct KnownMistake {
  const char* id;
  const char* title;
  const char* lesson;
};
const std::vector<KnownMistake>& known_mistakes();
Diagnosis diagnosis(const std::string& id, std::string explanation);

// Helpers for detectors: the `length` of each [n_heads, length, head_dim] shape row (empty
// when `rows` is not a list of such rows), and "[2, 0, 1]".
std::vector<int> shape_row_lengths(const json& rows);
std::string list_text(const std::vector<int>& values);

// Per stage (diagnose_cache.cpp, diagnose_decode.cpp).
std::vector<Diagnosis> diagnose_cache_structure(const CaseView& c);
std::vector<Diagnosis> diagnose_multi_layer_cache(const CaseView& c);
std::vector<Diagnosis> diagnose_one_token(const CaseView& c);     // diagnose_decode.cpp
std::vector<Diagnosis> diagnose_prefill(const CaseView& c);       // diagnose_decode.cpp
std::vector<Diagnosis> diagnose_prefix_reuse(const CaseView& c);  // diagnose_decode.cpp

}  // namespace course

namespace course {
// The catalogue, in two halves kept next to their detectors.
const std::vector<KnownMistake>& cache_mistakes();   // diagnose_cache.cpp
const std::vector<KnownMistake>& decode_mistakes();  // diagnose_decode.cpp
}  // namespace course
