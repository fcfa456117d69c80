// The stage table: read from stages/manifest.json, the one place the course's stages are
// listed, and checked on load.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "judge/stages.hpp"
#include "test_support.hpp"

using course::CourseError;
using course::load_stage_table;
using testing_support::source_dir;
using testing_support::TempDir;
using testing_support::write_file;
namespace fs = std::filesystem;

namespace {

const char* kStage =
    R"({"slug": "cache-structure", "title": "One layer", "folder": "01-cache-structure",)"
    R"( "files": ["src/kvcache.cpp"], "hints": ["Rows are positions.", "Find the row.", "p * 768 + h * 64"]})";

std::string load_error(const std::string& manifest_text) {
  TempDir dir;
  write_file(dir / "manifest.json", manifest_text);
  try {
    load_stage_table(dir / "manifest.json");
  } catch (const CourseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(stages, numbers_stages_in_manifest_order_and_keeps_their_fields) {
  TempDir dir;
  write_file(dir / "manifest.json",
             std::string(R"({"stages": [)") + kStage +
                 R"(, {"slug": "prefill", "title": "Prefill", "folder": "04-prefill",)"
                 R"( "files": ["src/decode.cpp"], "hints": ["Mask.", "Hide the later rows.", "j <= p"], "setup": {"weights": {"kind": "synthetic", "config": "gpt2-small", "seed": 1}}}]})");
  auto stages = load_stage_table(dir / "manifest.json");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].number, 1);
  EXPECT_EQ(stages[0].slug, "cache-structure");
  EXPECT_EQ(stages[0].hints, (std::vector<std::string>{"Rows are positions.", "Find the row.", "p * 768 + h * 64"}));
  EXPECT_EQ(stages[0].files, std::vector<std::string>{"src/kvcache.cpp"});
  EXPECT_TRUE(stages[0].setup.empty());
  EXPECT_EQ(stages[1].number, 2);
  EXPECT_EQ(stages[1].setup["weights"]["seed"], 1);
}

TEST(stages, a_broken_manifest_is_an_error_naming_the_file_and_field) {
  EXPECT_NE(load_error("{\"stages\": [").find("manifest.json: is not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("{\"stages\": []}").find("non-empty \"stages\""), std::string::npos);
  EXPECT_NE(load_error(R"({"stages": [{"slug": "a", "title": "t", "folder": "f", "files": ["x"]}]})")
                .find("stages[0]: \"hints\" must be a list of at least 3 hint tiers"),
            std::string::npos);
  EXPECT_NE(load_error(std::string(R"({"stages": [)") + kStage + ", " + kStage + "]}")
                .find("\"cache-structure\" is listed twice"),
            std::string::npos);
  TempDir dir;
  try {
    load_stage_table(dir / "missing.json");
    ADD_FAILURE() << "a missing manifest loaded";
  } catch (const CourseError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: missing"), std::string::npos) << e.what();
  }
}

TEST(stages, every_stage_of_the_course_has_its_lesson_fixtures_and_files) {
  const auto& table = course::stage_table();
  ASSERT_FALSE(table.empty());
  for (const auto& s : table) {
    EXPECT_TRUE(fs::exists(source_dir() / "stages" / s.folder / "lesson.md")) << s.folder;
    EXPECT_TRUE(fs::is_directory(source_dir() / "fixtures" / s.slug)) << s.slug;
    for (const auto& f : s.files) EXPECT_TRUE(fs::exists(source_dir() / f)) << s.slug << ": " << f;
    EXPECT_EQ(s.folder.substr(0, 3), (s.number < 10 ? "0" : "") + std::to_string(s.number) + "-") << s.folder;
  }
}

TEST(stages, a_manifest_nested_100000_deep_or_with_a_huge_number_is_named_not_a_crash) {
  const std::string deep = std::string(R"({"stages": [)") + kStage + R"(], "x": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  EXPECT_NE(load_error(deep).find("manifest.json: is nested deeper than 64 levels"), std::string::npos);
  const std::string huge = std::string(R"({"stages": [)") + kStage + R"(], "x": 1e400})";
  EXPECT_NE(load_error(huge).find("manifest.json: holds a number too large for a double"), std::string::npos);
}

TEST(stages, a_setup_no_runner_can_prepare_is_named) {
  const std::string bad = std::string(R"({"stages": [)") + kStage + R"(]})";
  std::string with_setup = bad;
  with_setup.insert(with_setup.rfind("}]"), R"(, "setup": {"weights": {"seed": 1}})");
  EXPECT_NE(load_error(with_setup).find("stages[0]: \"setup\": weights: has no \"kind\""), std::string::npos)
      << load_error(with_setup);
}

TEST(stages, a_manifest_that_is_a_fifo_or_a_folder_is_refused_at_once) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "manifest.json").c_str(), 0600), 0);
  try {
    load_stage_table(dir / "manifest.json");
    ADD_FAILURE() << "a FIFO manifest loaded";
  } catch (const CourseError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO (named pipe), not a regular file"), std::string::npos) << e.what();
  }
  fs::create_directory(dir / "folder.json");
  EXPECT_THROW(load_stage_table(dir / "folder.json"), CourseError);
}

// "points": a stage's weight in an autograder's score; 10 when not given.
TEST(stages, points_default_to_ten_and_must_be_a_number) {
  TempDir dir;
  write_file(
      dir / "manifest.json",
      std::string(R"({"stages": [)") + kStage +
          R"(, {"slug": "prefill", "title": "Prefill", "folder": "04-prefill", "points": 25.5,)"
          R"( "files": ["src/decode.cpp"], "hints": ["Mask.", "Hide the later rows.", "j <= p"]}]})");
  auto stages = load_stage_table(dir / "manifest.json");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].points, 10);
  EXPECT_EQ(stages[1].points, 25.5);
  const std::string with_points =
      R"({"slug": "a", "title": "t", "folder": "f", "files": ["x"], "hints": ["a", "b", "c"], "points": )";
  EXPECT_NE(load_error(R"({"stages": [)" + with_points + R"("ten"}]})")
                .find("stages[0]: \"points\" must be a number"),
            std::string::npos);
  EXPECT_NE(
      load_error(R"({"stages": [)" + with_points + "-1}]}").find("\"points\" must be a number"),
      std::string::npos);
}

// "hints": at least three tiers (the idea, the approach, near code), each a non-empty
// string; the old single "hint" is named as such.
TEST(stages, hints_are_at_least_three_tiers_of_text) {
  const std::string head = R"({"stages": [{"slug": "a", "title": "t", "folder": "f", "files": ["x"], )";
  EXPECT_NE(load_error(head + R"("hints": ["one", "two"]}]})").find("stages[0]: \"hints\" must be a list of at least 3"),
            std::string::npos);
  EXPECT_NE(load_error(head + R"("hints": "one"}]})").find("\"hints\" must be a list"), std::string::npos);
  EXPECT_NE(load_error(head + R"("hints": ["one", "", "three"]}]})").find("\"hints\"[1] (tier 2) must be a non-empty string"),
            std::string::npos);
  EXPECT_NE(load_error(head + R"("hints": ["one", 2, "three"]}]})").find("\"hints\"[1] (tier 2)"), std::string::npos);
  EXPECT_NE(load_error(head + R"("hint": "one"}]})").find("\"hint\" is one hint; \"hints\" must be a list"),
            std::string::npos);
  EXPECT_EQ(load_error(head + R"("hints": ["1", "2", "3", "4"]}]})"), "");
}

TEST(stages, every_stage_of_the_course_has_three_hint_tiers_or_more) {
  for (const auto& s : course::stage_table()) EXPECT_GE(s.hints.size(), 3u) << s.slug;
}
