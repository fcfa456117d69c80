// The catalogue of known mistakes, stage by stage. A mistake is stated once, in its
// .mistake file (stages/<folder>/mistakes/NAME.mistake: the edit of the reference that
// makes it, and the catalogue's text: title, explanation, lesson section, hint tier).
// Those files stay with the course's authors, so the text a grader needs travels in a
// file written from them, stages/<folder>/grader/catalogue.json, by
// `make-fixtures --catalogues` (CMake's `fixtures` target runs it), committed like the
// fixtures and checked against the .mistake files by the tests. known_mistakes()
// (diagnose.hpp) reads those files in course order.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wire/json_bounded.hpp"
#include "wire/variant_file.hpp"

namespace course {

struct CatalogueEntry {
  std::string id;           // the diagnosis id, e.g. "kvc.transposed_layout"
  std::string title;        // may hold {parameter}
  std::string explanation;  // may hold {parameter}
  std::string anchor;       // the section of the stage's lesson.md that explains it
  int hint = 0;  // the tier of the stage's hints (manifest.json) that addresses it; 0: none does
};

// The file's name under a stage's folder.
inline constexpr const char* kCatalogueFile = "grader/catalogue.json";
inline constexpr const char* kCatalogueFormat = "kvcourse-catalogue/1";

// A stage's entries from its mistakes (read_variant_files of its mistakes/ folder): one per
// diagnosis id, in file-name order. Throws VariantFileError when two files of one id state
// different text.
std::vector<CatalogueEntry> catalogue_from_mistakes(const std::vector<VariantFile>& mistakes);

// The catalogue file's text for stage `slug`, and its reading (bounded: at most 1 MiB,
// nested as a catalogue is). Throws CourseError naming `name` and the problem.
std::string catalogue_text(const std::string& slug, const std::vector<CatalogueEntry>& entries);
std::vector<CatalogueEntry> parse_catalogue(const std::string& text, const std::string& slug,
                                            const std::string& name);

}  // namespace course
