// The catalogue's text: stated by the .mistake files (wire/variant_file.hpp), carried to
// every course tree by each stage's catalogue.json (judge/catalogue.hpp), and read back by
// the grader, which refuses a broken one by name.
#include <gtest/gtest.h>

#include "judge/catalogue.hpp"
#include "judge/stages.hpp"
#include "test_support.hpp"

using namespace course;
using testing_support::has;
using testing_support::TempDir;
using testing_support::write_file;

namespace {

const char* const kHeader =
    "# appends twice\n"
    "diagnosis: x.twice\n"
    "stage: cache-structure\n";
const char* const kText =
    "title: appended twice\n"
    "explanation: append() stores each position twice\n"
    "lesson: mistake-appending-twice\n"
    "hint: 2\n";
const char* const kEdit =
    "file: reference/kvcache.cpp\n"
    "@@ find\n"
    "a\n"
    "@@ replace\n"
    "b\n"
    "@@ end\n";

// The VariantFileError of reading `text` as a .mistake file, or "".
std::string mistake_error(const std::string& text) {
  TempDir dir;
  write_file(dir / "twice.mistake", text);
  try {
    read_variant_file(dir / "twice.mistake");
  } catch (const VariantFileError& e) {
    return e.what();
  }
  return "";
}

// The CourseError of reading `text` as stage cache-structure's catalogue, or "".
std::string catalogue_error(const std::string& text) {
  try {
    parse_catalogue(text, "cache-structure", "catalogue.json");
  } catch (const CourseError& e) {
    return e.what();
  }
  return "";
}

CatalogueEntry entry(const std::string& id) {
  return {id, "a title", "what the output shows", "mistake-" + id, 1};
}

}  // namespace

TEST(catalogue_file, a_mistake_states_its_text) {
  EXPECT_EQ(mistake_error(std::string(kHeader) + kText + kEdit), "");
  EXPECT_TRUE(has(mistake_error(std::string(kHeader) + kEdit),
                  "twice.mistake: no \"title:\" line (the catalogue's text)"));
  EXPECT_TRUE(has(mistake_error(std::string(kHeader) +
                                "title: t\nexplanation: e\nlesson: twice\nhint: 1\n" + kEdit),
                  "\"lesson: twice\" is not an anchor of a lesson's mistake section"));
  EXPECT_TRUE(
      has(mistake_error(std::string(kHeader) +
                        "title: t\nexplanation: e\nlesson: mistake-t\nhint: two\n" + kEdit),
          "\"hint:\" must be the tier of the stage's hints that covers it (0: none), not \"two\""));
}

TEST(catalogue_file, files_of_one_diagnosis_must_state_the_same_text) {
  TempDir dir;
  write_file(dir / "a.mistake", std::string(kHeader) + "parameter: 1\n" + kText + kEdit);
  write_file(dir / "b.mistake", std::string(kHeader) + "parameter: 2\n" + kText + kEdit);
  std::vector<CatalogueEntry> entries = catalogue_from_mistakes(read_variant_files(dir.path()));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].title, "appended twice");
  EXPECT_EQ(entries[0].hint, 2);
  write_file(dir / "b.mistake", std::string(kHeader) +
                                    "parameter: 2\ntitle: other\nexplanation: e\n"
                                    "lesson: mistake-appending-twice\nhint: 2\n" +
                                    kEdit);
  try {
    catalogue_from_mistakes(read_variant_files(dir.path()));
    ADD_FAILURE() << "two texts for one diagnosis were taken";
  } catch (const VariantFileError& e) {
    EXPECT_TRUE(has(e.what(), "b.mistake: states diagnosis x.twice with other text than"))
        << e.what();
  }
}

TEST(catalogue_file, what_is_written_reads_back_the_same) {
  const std::vector<CatalogueEntry> written = {entry("x.one"), entry("x.two")};
  const std::vector<CatalogueEntry> read = parse_catalogue(
      catalogue_text("cache-structure", written), "cache-structure", "catalogue.json");
  ASSERT_EQ(read.size(), 2u);
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].id, written[i].id);
    EXPECT_EQ(read[i].title, written[i].title);
    EXPECT_EQ(read[i].explanation, written[i].explanation);
    EXPECT_EQ(read[i].anchor, written[i].anchor);
    EXPECT_EQ(read[i].hint, written[i].hint);
  }
}

TEST(catalogue_file, a_broken_catalogue_is_named_with_the_way_to_write_it_again) {
  EXPECT_TRUE(has(catalogue_error("{"), "catalogue.json"));
  EXPECT_TRUE(
      has(catalogue_error("{\"format\": \"x\"}"),
          "catalogue.json: not a catalogue of format \"kvcourse-catalogue/1\" (write it again: "
          "cmake --build build --target fixtures)"));
  EXPECT_TRUE(
      has(catalogue_error(catalogue_text("rollback", {entry("x.one")})),
          "catalogue.json: is the catalogue of stage \"rollback\", not \"cache-structure\""));
  json doc = json::parse(catalogue_text("cache-structure", {entry("x.one")}));
  doc["entries"][0].erase("title");
  EXPECT_TRUE(has(catalogue_error(doc.dump()),
                  "catalogue.json: entries[0]: needs a non-empty string \"title\""));
  doc = json::parse(catalogue_text("cache-structure", {entry("x.one")}));
  doc["entries"][0].erase("hint");
  EXPECT_TRUE(has(catalogue_error(doc.dump()), "entries[0]: needs a whole number \"hint\""));
  EXPECT_TRUE(
      has(catalogue_error(catalogue_text("cache-structure", {entry("x.one"), entry("x.one")})),
          "entries[1]: diagnosis x.one is listed twice"));
  EXPECT_TRUE(has(catalogue_error(std::string(70, '[') + std::string(70, ']')), "catalogue.json"));
}
