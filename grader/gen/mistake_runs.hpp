// The generator's second half: every catalogued mistake (tests/buggy/NAME.mistake, built
// as runner-buggy-NAME) and every valid alternative (NAME.alternative, runner-alternative-NAME)
// runs each case of its stage as a child process, exactly as the grader would run it. A
// mistake's answer becomes a MistakeRecord in the fixture (fixture.hpp); an alternative
// must pass every case.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wire/fixture.hpp"

namespace course {

// The header of a tests/buggy file ("key: value" lines before the first "@@").
struct VariantFile {
  std::string name;       // file stem: runner-buggy-<name> or runner-alternative-<name>
  bool mistake = true;    // .mistake (false: .alternative)
  std::string stage;      // "stage:"
  std::string id;         // "diagnosis:" (mistakes only)
  std::string parameter;  // "parameter:" (optional)
  std::filesystem::path runner;
};

// Every .mistake and .alternative file of `dir`, with its runner in `runners_dir`. Throws
// std::runtime_error for a file without a stage, a mistake without a diagnosis, or a
// runner that is not built.
std::vector<VariantFile> read_variant_files(const std::filesystem::path& dir,
                                            const std::filesystem::path& runners_dir);

// Runs every variant of the stage on every fixture (in parallel, `jobs` runners at a time),
// fills each fixture's `mistakes` (in the order of `variants`), and proves what the
// catalogue needs: each mistake answers every case and fails at least one; no two
// mistakes give the same answers on every case; each alternative passes every case.
// Throws std::runtime_error naming the variants and cases when one of these fails.
// With `prove_catalogue` false (the hidden set: a few random cases, which need not catch
// every mistake) only the alternatives are proved; a mistake that gives no output on a
// case gets no record there, so no diagnosis can rest on that case.
void record_mistakes(const std::string& stage, const std::vector<VariantFile>& variants,
                     std::vector<Fixture>& fixtures, int jobs, bool prove_catalogue = true);

}  // namespace course
