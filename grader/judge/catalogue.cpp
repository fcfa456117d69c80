// The catalogue of known mistakes: one entry per diagnosis id, each in the folder of its
// stage (stages/<folder>/grader/catalogue.cpp, read through judge/catalogue.hpp's table)
// and proved by the .mistake file of the same id there (course_test checks both ways). The grader
// names an entry only when the learner's output is bit for bit what that file produces
// (identify.cpp). That proves the output, not the code that made it, so the text states
// the symptom and then every code site known to give that same output ("the copy shares its
// layers: clone() copies the pointers, or the adapter copies the ModelCache"), never one
// cause where another known one yields the same bits.
#include "judge/catalogue.hpp"

#include <stdexcept>

#include "judge/diagnose.hpp"

namespace course {

namespace {

std::string fill(std::string text, const std::string& parameter) {
  const std::string key = "{parameter}";
  for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), parameter);
  return text;
}

}  // namespace

const std::vector<KnownMistake>& known_mistakes() {
  static const std::vector<KnownMistake> all = [] {
    std::vector<KnownMistake> v;
    for (const StageCatalogue& stage : stage_catalogues())
      for (const CatalogueEntry& e : stage.entries())
        v.push_back({e.id, e.title, e.explanation,
                     "stages/" + std::string(stage.folder) + "/lesson.md#" + e.anchor, e.hint});
    return v;
  }();
  return all;
}

Diagnosis diagnosis(const std::string& id, const std::string& parameter) {
  for (const KnownMistake& m : known_mistakes())
    if (id == m.id)
      return {m.id,     parameter, fill(m.title, parameter), fill(m.explanation, parameter),
              m.lesson, m.hint};
  throw std::logic_error("unknown diagnosis id " + id);
}

}  // namespace course
