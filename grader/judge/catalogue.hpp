// The catalogue of known mistakes, stage by stage: each stage's entries are in its own
// folder (stages/<folder>/grader/catalogue.cpp, in namespace course::stage_<id>), beside
// the .mistake files that prove them, and the table of them is written by CMake from
// stages/manifest.json (kvcourse_stage_table in cmake/Stages.cmake). known_mistakes()
// (diagnose.hpp) joins them in course order.
#pragma once

#include <vector>

namespace course {

struct CatalogueEntry {
  const char* id;           // the diagnosis id, e.g. "kvc.transposed_layout"
  const char* title;        // may hold {parameter}
  const char* explanation;  // may hold {parameter}
  const char* anchor;       // the section of the stage's lesson.md that explains it
  int hint;  // the tier of the stage's hints (manifest.json) that addresses it; 0: none does
};

struct StageCatalogue {
  const char* slug;
  const char* folder;  // under stages/: the lesson is stages/<folder>/lesson.md
  const std::vector<CatalogueEntry>& (*entries)();
};

// The stages with a catalogue, in course order.
const std::vector<StageCatalogue>& stage_catalogues();

}  // namespace course
