// The course checks itself: the reference passes every stage, the skeleton fails every
// stage cleanly, the catalogue of mistakes and the fixtures' records of them agree, the
// fixtures are what the generator makes, and every stub has its TODO. (catalogue_test
// grades every known mistake and valid alternative.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "judge/catalogue.hpp"
#include "judge/diagnose.hpp"
#include "judge/stages.hpp"
#include "judge/variants.hpp"
#include "test_support.hpp"
#include "wire/fixture.hpp"

using course::json;
using testing_support::bin;
using testing_support::run;
using testing_support::source_dir;
using testing_support::TempDir;
namespace fs = std::filesystem;

namespace {

json grade_json(const std::string& args, int expected_exit) {
  TempDir state;
  // A generous time per case: this test is about verdicts, and sanitizer builds of the
  // GPT-2 stages are slow (cli_test covers the timeout itself).
  auto r = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " " + bin("grader") +
                   " --timeout 120 --format json " + args,
               false);
  EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.output.substr(0, 3000);
  try {
    return json::parse(r.output);
  } catch (const json::exception&) {
    ADD_FAILURE() << "not JSON: " << r.output.substr(0, 2000);
    return json::object();
  }
}

// "## Mistake: transposed layout" -> "mistake-transposed-layout" (GitHub's rule, for the
// characters our headings use).
std::set<std::string> heading_anchors(const fs::path& markdown) {
  std::set<std::string> anchors;
  std::ifstream in(markdown);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) continue;
    std::string text = line.substr(line.find_first_not_of('#'));
    std::string anchor;
    for (char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c))) anchor += char(std::tolower(static_cast<unsigned char>(c)));
      else if (c == ' ' || c == '-') anchor += '-';
      else if (c == '_') anchor += '_';
    }
    while (!anchor.empty() && anchor.front() == '-') anchor.erase(anchor.begin());
    anchors.insert(anchor);
  }
  return anchors;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(course, reference_passes_every_stage) {
  json j = grade_json("--impl reference --all", 0);
  ASSERT_EQ(j["stages"].size(), course::stage_table().size());
  for (const auto& s : j["stages"]) EXPECT_EQ(s["passed"], s["total"]) << s["slug"];
}

TEST(course, skeleton_fails_every_stage_with_not_implemented) {
  for (const auto& stage : course::stage_table()) {
    json j = grade_json("--impl learner --stage " + stage.slug, 1);
    for (const auto& c : j["stages"][0]["cases"]) {
      EXPECT_EQ(c["status"], "not_implemented") << stage.slug << " " << c["name"] << ": " << c["message"];
      EXPECT_NE(c["message"].get<std::string>().find("not implemented yet: "), std::string::npos) << c["message"];
    }
  }
}

// Each catalogued id is proved by at least one stages/*/mistakes/*.mistake file, and each file
// names a catalogued id (catalogue_test grades them).
TEST(course, every_catalogued_mistake_has_a_mistake_file_and_back) {
  std::set<std::string> catalogued, in_files;
  for (const auto& m : course::known_mistakes()) catalogued.insert(m.id);
  for (const course::VariantFile& v : course::stage_variant_files(source_dir() / "stages", course::stage_table())) {
    if (!v.mistake) continue;
    EXPECT_TRUE(catalogued.count(v.id)) << v.path << ": " << v.id << " is not catalogued";
    in_files.insert(v.id);
  }
  for (const std::string& id : catalogued) EXPECT_TRUE(in_files.count(id)) << id << " has no .mistake file";
  EXPECT_GE(in_files.size(), 35u);
}

// Every fixture records what each mistake of its stage returns, and nothing else: the
// generator ran them all (make-fixtures --mistakes). catalogue_test proves the records.
TEST(course, every_fixture_records_each_mistake_of_its_stage) {
  std::map<std::string, std::set<std::string>> by_stage;  // stage -> "id|parameter"
  for (const course::VariantFile& v : course::stage_variant_files(source_dir() / "stages", course::stage_table()))
    if (v.mistake) by_stage[v.stage].insert(v.id + "|" + v.parameter);
  for (const auto& stage : course::stage_table()) {
    for (const auto& file : course::list_fixtures(source_dir() / "fixtures" / stage.slug)) {
      std::set<std::string> recorded;
      for (const auto& m : course::load_fixture(file).mistakes) recorded.insert(m.id + "|" + m.parameter);
      EXPECT_EQ(recorded, by_stage[stage.slug]) << file << ": run `cmake --build build --target fixtures`";
    }
  }
}

// Issue 25: the visible cases alone catch every mistake and tell each from every other,
// read from the committed fixtures' records (the hidden set is not shipped, so a mistake
// only a hidden case catches would be named to nobody who grades the visible set).
TEST(course, the_visible_cases_tell_every_mistake_from_the_reference_and_from_each_other) {
  for (const auto& stage : course::stage_table()) {
    std::map<std::string, std::vector<std::string>>
        answers;  // "id: parameter" -> a record per case
    std::vector<std::string> cases;
    for (const auto& file : course::list_fixtures(source_dir() / "fixtures" / stage.slug)) {
      const course::Fixture fx = course::load_fixture(file);
      cases.push_back(fx.name);
      for (const auto& m : fx.mistakes) {
        std::vector<std::string>& a =
            answers[m.id + (m.parameter.empty() ? "" : ": " + m.parameter)];
        a.resize(cases.size() - 1);  // a case without this mistake's record keeps "" there
        a.push_back(m.output);
      }
    }
    for (auto& [mistake, records] : answers) records.resize(cases.size());
    for (const auto& [mistake, records] : answers) {
      EXPECT_FALSE(std::all_of(records.begin(), records.end(),
                               [](const std::string& r) { return r == course::kMistakePasses; }))
          << stage.slug << ": the mistake " << mistake
          << " passes every visible case; add a case that catches it";
      for (const auto& [other, theirs] : answers) {
        if (other <= mistake) continue;
        EXPECT_NE(records, theirs)
            << stage.slug << ": no visible case tells " << mistake << " from " << other
            << " (they answer every one alike); add a case on which their outputs differ";
      }
    }
  }
}

TEST(course, every_diagnosis_points_to_an_existing_lesson_section) {
  for (const auto& m : course::known_mistakes()) {
    std::string lesson = m.lesson;
    auto hash = lesson.find('#');
    ASSERT_NE(hash, std::string::npos) << m.id;
    fs::path file = source_dir() / lesson.substr(0, hash);
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_TRUE(heading_anchors(file).count(lesson.substr(hash + 1))) << m.id << ": no heading for " << lesson;
  }
}

// The reference's part of every fixture: the generator without --mistakes writes the
// fixtures minus the mistakes' records, quickly. The records need every buggy runner run
// on every case; catalogue_test proves them instead (each mistake's runner must be
// identified as itself, and only itself, from the committed records).
// The same for the hidden set (fixtures-hidden/, the generator's default seed and count).
TEST(course, fixtures_are_exactly_what_the_generator_writes) {
  TempDir out;
  auto r = run(bin("make-fixtures") + " --out " + (out / "fixtures").string() + " --hidden " +
               (out / "fixtures-hidden").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* set : {"fixtures", "fixtures-hidden"}) {
    const fs::path made = out / set, kept = source_dir() / set;
    std::set<std::string> generated, committed;
    for (const auto& e : fs::recursive_directory_iterator(made))
      if (e.is_regular_file()) generated.insert(fs::relative(e.path(), made).string());
    for (const auto& e : fs::recursive_directory_iterator(kept))
      if (e.is_regular_file()) committed.insert(fs::relative(e.path(), kept).string());
    EXPECT_EQ(generated, committed) << "run `cmake --build build --target fixtures` and commit " << set << "/";
    for (const auto& rel : generated) {
      if (!committed.count(rel)) continue;
      // Content, not bytes: the same JSON document after inflating.
      json a = json::parse(course::read_maybe_gzip(made / rel));
      json b = json::parse(course::read_maybe_gzip(kept / rel));
      b.erase("mistakes");
      EXPECT_TRUE(a == b) << set << "/" << rel << " differs from what the reference gives now";
    }
  }
}

// Each stage's catalogue.json (what a course tree without the .mistake files names its
// mistakes by) says what the stage's .mistake files say.
TEST(course, the_catalogues_are_exactly_what_the_mistake_files_say) {
  TempDir out;
  auto r = run(bin("make-fixtures") + " --catalogues " + out.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& stage : course::stage_table()) {
    const fs::path made = out / stage.folder / course::kCatalogueFile,
                   kept = source_dir() / "stages" / stage.folder / course::kCatalogueFile;
    ASSERT_EQ(fs::exists(made), fs::exists(kept)) << kept << ": run `cmake --build build --target fixtures`";
    if (fs::exists(made)) {
      EXPECT_EQ(testing_support::read_file(made), testing_support::read_file(kept))
          << kept << ": run `cmake --build build --target fixtures`";
    }
  }
}

// The hidden set records the mistakes of its stage (only: a mistake that gives no output on
// a drawn case has no record there), so that diagnosis works on hidden cases too; and
// every stage has hidden cases.
TEST(course, the_hidden_set_records_the_mistakes_of_its_stage) {
  std::map<std::string, std::set<std::string>> by_stage;  // stage -> "id|parameter"
  for (const course::VariantFile& v : course::stage_variant_files(source_dir() / "stages", course::stage_table()))
    if (v.mistake) by_stage[v.stage].insert(v.id + "|" + v.parameter);
  for (const auto& stage : course::stage_table()) {
    const auto files = course::list_fixtures(source_dir() / "fixtures-hidden" / stage.slug);
    EXPECT_FALSE(files.empty()) << stage.slug;
    for (const auto& file : files) {
      const course::Fixture fx = course::load_fixture(file);
      EXPECT_EQ(fx.stage, stage.slug) << file;
      EXPECT_EQ(fx.name.rfind("r", 0), 0u) << file;
      if (!by_stage[stage.slug].empty()) {
        EXPECT_FALSE(fx.mistakes.empty()) << file << ": make-fixtures --mistakes";
      }
      for (const auto& m : fx.mistakes) EXPECT_TRUE(by_stage[stage.slug].count(m.id + "|" + m.parameter)) << file << " " << m.id;
    }
  }
}

TEST(course, every_stub_has_one_todo) {
  for (const char* folder : {"src", "adapters"}) {
    for (const auto& e : fs::directory_iterator(source_dir() / folder)) {
      std::string text = testing_support::read_file(e.path());
      size_t stubs = count(text, "not_implemented(\"");
      EXPECT_GT(stubs, 0u) << e.path() << " has no stub";
      EXPECT_EQ(count(text, "// TODO:"), stubs) << e.path() << ": one TODO per stub";
    }
  }
}
