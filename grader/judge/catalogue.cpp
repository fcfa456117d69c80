// The catalogue of known mistakes: one entry per diagnosis id, stated by the .mistake files
// of its stage's folder and carried to every course tree by the stage's catalogue.json
// (judge/catalogue.hpp). The grader names an entry only when the learner's output is bit
// for bit what that file produces (identify.cpp). That proves the output, not the code
// that made it, so the text states the symptom and then every code site known to give
// that same output ("the copy shares its layers: clone() copies the pointers, or the
// adapter copies the ModelCache"), never one cause where another known one yields the
// same bits.
#include "judge/catalogue.hpp"

#include <stdexcept>

#include "judge/diagnose.hpp"
#include "judge/stages.hpp"
#include "wire/fixture.hpp"

namespace course {

namespace {

constexpr size_t kMaxCatalogueBytes = size_t(1) << 20;

std::string fill(std::string text, const std::string& parameter) {
  const std::string key = "{parameter}";
  for (size_t at; (at = text.find(key)) != std::string::npos;)
    text.replace(at, key.size(), parameter);
  return text;
}

// Each stage's catalogue file, read from the course tree, in course order.
std::vector<KnownMistake> read_catalogues() {
  std::vector<KnownMistake> all;
  for (const Stage& stage : stage_table()) {
    const std::filesystem::path file = course_root() / "stages" / stage.folder / kCatalogueFile;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;  // a stage with no known mistakes
    std::string text;
    try {
      text = read_regular_file(file, kMaxCatalogueBytes);
    } catch (const FixtureError& e) {
      throw CourseError(std::string("the course is broken: ") + e.what());
    }
    try {
      for (CatalogueEntry& e : parse_catalogue(text, stage.slug, file.string()))
        all.push_back({std::move(e.id), std::move(e.title), std::move(e.explanation),
                       "stages/" + stage.folder + "/lesson.md#" + e.anchor, e.hint});
    } catch (const CourseError& e) {
      throw CourseError(std::string("the course is broken: ") + e.what());
    }
  }
  return all;
}

}  // namespace

std::vector<CatalogueEntry> catalogue_from_mistakes(const std::vector<VariantFile>& mistakes) {
  std::vector<CatalogueEntry> entries;
  std::vector<const VariantFile*> stated_by;
  for (const VariantFile& v : mistakes) {
    if (!v.mistake) continue;
    const CatalogueEntry e{v.id, v.title, v.explanation, v.lesson, v.hint};
    size_t i = 0;
    while (i < entries.size() && entries[i].id != e.id) ++i;
    if (i == entries.size()) {
      entries.push_back(e);
      stated_by.push_back(&v);
    } else if (entries[i].title != e.title || entries[i].explanation != e.explanation ||
               entries[i].anchor != e.anchor || entries[i].hint != e.hint) {
      throw VariantFileError(v.path.string() + ": states diagnosis " + v.id +
                             " with other text than " + stated_by[i]->path.string() +
                             " (title, explanation, lesson and hint must agree)");
    }
  }
  return entries;
}

std::string catalogue_text(const std::string& slug, const std::vector<CatalogueEntry>& entries) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CatalogueEntry& e : entries)
    list.push_back({{"id", e.id},
                    {"title", e.title},
                    {"explanation", e.explanation},
                    {"lesson", e.anchor},
                    {"hint", e.hint}});
  const nlohmann::ordered_json doc = {
      {"format", kCatalogueFormat},
      {"stage", slug},
      {"written_by",
       "make-fixtures --catalogues, from this stage's mistakes/*.mistake: edit those, not this"},
      {"entries", list}};
  return doc.dump(2) + "\n";
}

std::vector<CatalogueEntry> parse_catalogue(const std::string& text, const std::string& slug,
                                            const std::string& name) {
  json doc;
  try {
    doc = parse_json_bounded(text, JsonLimits{8, kMaxCatalogueBytes}, name);
  } catch (const JsonInputError& e) {
    throw CourseError(e.what());
  }
  const std::string regenerate = " (write it again: cmake --build build --target fixtures)";
  if (!doc.is_object() || doc.value("format", json()) != kCatalogueFormat)
    throw CourseError(name + ": not a catalogue of format \"" + std::string(kCatalogueFormat) +
                      "\"" + regenerate);
  if (doc.value("stage", json()) != slug)
    throw CourseError(name + ": is the catalogue of stage " +
                      json_excerpt(doc.value("stage", json()), 60) + ", not \"" + slug + "\"" +
                      regenerate);
  if (!doc.contains("entries") || !doc["entries"].is_array())
    throw CourseError(name + ": has no \"entries\" list" + regenerate);
  std::vector<CatalogueEntry> entries;
  for (size_t i = 0; i < doc["entries"].size(); ++i) {
    const json& e = doc["entries"][i];
    const std::string where = name + ": entries[" + std::to_string(i) + "]";
    auto text_of = [&](const char* key) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string() ||
          e[key].get<std::string>().empty())
        throw CourseError(where + ": needs a non-empty string \"" + key + "\"");
      return e[key].get<std::string>();
    };
    CatalogueEntry entry{text_of("id"), text_of("title"), text_of("explanation"), text_of("lesson"),
                         0};
    if (!e.contains("hint") || !e["hint"].is_number_integer() || e["hint"].get<int64_t>() < 0 ||
        e["hint"].get<int64_t>() > 100)
      throw CourseError(where + ": needs a whole number \"hint\" (0: no tier covers it)");
    entry.hint = e["hint"].get<int>();
    for (const CatalogueEntry& earlier : entries)
      if (earlier.id == entry.id)
        throw CourseError(where + ": diagnosis " + entry.id + " is listed twice");
    entries.push_back(std::move(entry));
  }
  return entries;
}

const std::vector<KnownMistake>& known_mistakes() {
  static const std::vector<KnownMistake> all = read_catalogues();
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
