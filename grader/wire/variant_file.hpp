// The files of the catalogue of mistakes: tests/buggy/NAME.mistake (a known mistake) and
// NAME.alternative (the reference written another, equally right way). This is their one
// reader; the fixture generator, apply-mistake, the tests and scripts/asan.sh (through
// `apply-mistake --field`) all go through it. A file is a header of "key: value" lines
// (and "#" comments) and then find/replace edits to one reference file:
//
//   # what the mistake does
//   diagnosis: dec.wrong_scale     (mistakes only: the catalogue id)
//   parameter: 1/sqrt(768)         (optional: shown in the message)
//   stage: one-token               (the stage it is graded on)
//   title: scores scaled by {parameter}                    (mistakes only: the catalogue's
//   explanation: the attention scores are multiplied ...    text, judge/catalogue.hpp;
//   lesson: mistake-a-wrong-scale                           the section of the stage's lesson;
//   hint: 3                                                 the hint tier that covers it, 0: none)
//   file: reference/decode.cpp     (the file the edits apply to)
//   @@ find
//   <lines that occur exactly once in that file>
//   @@ replace
//   <the lines to put there instead>
//   @@ end
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace course {

struct VariantEdit {
  std::string find, replace;  // whole lines, each ending in '\n'
};

struct VariantFile {
  std::filesystem::path path;
  std::string name;     // the file's stem: runner-buggy-<name> or runner-alternative-<name>
  bool mistake = true;  // .mistake (false: .alternative)
  std::map<std::string, std::string> header;  // every "key: value" line
  std::string stage;                          // "stage:"
  std::string id;                             // "diagnosis:" (mistakes only)
  std::string parameter;                      // "parameter:" (optional)
  std::string file;                           // "file:"
  // The catalogue's text (mistakes only): "title:", "explanation:", "lesson:" (an anchor of
  // the stage's lesson.md), "hint:" (a tier of the stage's hints, 0: none).
  std::string title, explanation, lesson;
  int hint = 0;
  std::vector<VariantEdit> edits;
  // The runner built from it, relative to the folder of runners.
  std::string runner_name() const {
    return (mistake ? "runner-buggy-" : "runner-alternative-") + name;
  }
};

struct VariantFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads and checks one file: it must have a stage, a file and at least one edit, and a
// mistake a diagnosis, a title, an explanation, a lesson anchor and a hint tier. Throws VariantFileError naming the file and the problem.
VariantFile read_variant_file(const std::filesystem::path& file);

// Every .mistake and .alternative file of `dir`, sorted by file name. Throws
// VariantFileError for a broken file, or for two mistakes with the same diagnosis and
// parameter (the grader could not tell them apart).
std::vector<VariantFile> read_variant_files(const std::filesystem::path& dir);

// True for a file name the catalogue holds (".mistake" or ".alternative").
bool is_variant_file(const std::filesystem::path& file);

}  // namespace course
