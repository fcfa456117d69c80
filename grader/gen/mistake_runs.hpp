// The generator's second half: every catalogued mistake (stages/<folder>/mistakes/NAME.mistake,
// built as runner-buggy-NAME) and every valid alternative (NAME.alternative,
// runner-alternative-NAME) is graded on the cases of its stage by grade_cases (judge/grade.hpp),
// the loop that grades a learner: a mistake's answer to each case becomes a MistakeRecord in the
// fixture (fixture.hpp), the digest the grader computes of that answer; an alternative must pass
// every case.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wire/fixture.hpp"
#include "wire/variant_file.hpp"

namespace course {

// A variant file (wire/variant_file.hpp) with the runner built from it.
struct Variant {
  VariantFile file;
  std::filesystem::path runner;
};

// Every .mistake and .alternative file of every stage under `stages_dir` (the course's
// stages/: judge/variants.hpp), with its runner in `runners_dir`. Throws std::runtime_error
// for a broken file (VariantFileError) or a runner that is not built. With `only_stage`,
// only that stage's files (and runners) are read.
std::vector<Variant> read_variants(const std::filesystem::path& stages_dir,
                                   const std::filesystem::path& runners_dir,
                                   const std::string& only_stage = "");

// How the variants are graded.
struct RecordOptions {
  int jobs = 1;  // runners at a time
  // The folder of the synthetic weights files (GradeOptions::weights_dir); empty: each
  // runner generates the weights.
  std::filesystem::path weights_dir;
  // With false (the hidden set: a few random cases, which need not catch every mistake)
  // only the alternatives are proved; a mistake that gives no output on a case gets no
  // record there, so no diagnosis can rest on that case.
  bool prove_catalogue = true;
};

// Grades every variant of the stage on every fixture (in parallel, `jobs` runners at a
// time), fills each fixture's `mistakes` (in the order of `variants`), and proves what the
// catalogue needs: each mistake answers every case and fails at least one; no two
// mistakes give the same answers on every case; each alternative passes every case.
// Throws std::runtime_error naming the variants and cases when one of these fails.
void record_mistakes(const std::string& stage, const std::vector<Variant>& variants,
                     std::vector<Fixture>& fixtures, const RecordOptions& options);

}  // namespace course
