#include "judge/stages.hpp"

#include <cstdlib>
#include <map>

#include "wire/adapter_spec.hpp"
#include "wire/fixture.hpp"
#include "wire/json_bounded.hpp"

#ifndef KVCOURSE_SOURCE_DIR
#define KVCOURSE_SOURCE_DIR "."
#endif

namespace course {

namespace {

constexpr size_t kMaxManifestBytes = 1 << 20;

std::string text_field(const json& stage, const char* name, const std::string& where) {
  if (!stage.contains(name) || !stage[name].is_string() || stage[name].get<std::string>().empty())
    throw CourseError(where + ": \"" + name + "\" must be a non-empty string");
  return stage[name].get<std::string>();
}

// "hints": a list of at least kMinHintTiers non-empty strings, tier 1 first.
std::vector<std::string> hint_tiers(const json& stage, const std::string& where) {
  const std::string needs = "\"hints\" must be a list of at least " + std::to_string(kMinHintTiers) +
                            " hint tiers (the idea, the approach, near code), each a non-empty string";
  if (!stage.contains("hints")) {
    if (stage.contains("hint")) throw CourseError(where + ": \"hint\" is one hint; " + needs);
    throw CourseError(where + ": " + needs);
  }
  const json& list = stage["hints"];
  if (!list.is_array() || list.size() < size_t(kMinHintTiers)) throw CourseError(where + ": " + needs);
  std::vector<std::string> tiers;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty())
      throw CourseError(where + ": \"hints\"[" + std::to_string(i) + "] (tier " + std::to_string(i + 1) +
                        ") must be a non-empty string");
    tiers.push_back(list[i].get<std::string>());
  }
  return tiers;
}

Stage parse_stage(const json& j, int number, const std::string& where) {
  if (!j.is_object()) throw CourseError(where + " is not an object");
  Stage s;
  s.number = number;
  s.slug = text_field(j, "slug", where);
  s.title = text_field(j, "title", where);
  s.folder = text_field(j, "folder", where);
  s.hints = hint_tiers(j, where);
  if (!j.contains("files") || !j["files"].is_array() || j["files"].empty())
    throw CourseError(where + ": \"files\" must be a non-empty list of paths");
  for (const json& f : j["files"]) {
    if (!f.is_string()) throw CourseError(where + ": \"files\" holds a value that is not a path");
    s.files.push_back(f.get<std::string>());
  }
  if (j.contains("setup")) {
    if (const std::string problem = setup_problem(j["setup"]); !problem.empty())
      throw CourseError(where + ": \"setup\": " + problem);
    s.setup = j["setup"];
  }
  if (j.contains("points")) {
    const json& p = j["points"];
    if (!p.is_number() || p.get<double>() < 0 || p.get<double>() > 1e6)
      throw CourseError(where + ": \"points\" must be a number from 0 to 1000000");
    s.points = p.get<double>();
  }
  return s;
}

}  // namespace

std::filesystem::path course_root() {
  if (const char* env = std::getenv("KVCOURSE_ROOT"); env && *env) return env;
  return KVCOURSE_SOURCE_DIR;
}

std::vector<Stage> load_stage_table(const std::filesystem::path& manifest) {
  std::string text;
  try {
    text = read_regular_file(manifest, kMaxManifestBytes);
  } catch (const FixtureError& e) {
    std::error_code ec;
    if (!std::filesystem::exists(manifest, ec))
      throw CourseError(manifest.string() + ": missing; the course's stage list lives there");
    throw CourseError(std::string(e.what()) + "; the course's stage list lives there");
  }
  return parse_stage_table(text, manifest.string());
}

std::vector<Stage> parse_stage_table(const std::string& text, const std::string& name) {
  json doc;
  try {
    doc = parse_json_bounded(text, JsonLimits{kMaxJsonDepth, kMaxManifestBytes}, name);
  } catch (const JsonInputError& e) {
    throw CourseError(e.what());
  }
  if (!doc.is_object() || !doc.contains("stages") || !doc["stages"].is_array() || doc["stages"].empty())
    throw CourseError(name + ": needs a non-empty \"stages\" list");
  std::vector<Stage> stages;
  for (size_t i = 0; i < doc["stages"].size(); ++i) {
    Stage s = parse_stage(doc["stages"][i], int(i) + 1, name + ": stages[" + std::to_string(i) + "]");
    for (const Stage& earlier : stages)
      if (earlier.slug == s.slug) throw CourseError(name + ": stage \"" + s.slug + "\" is listed twice");
    stages.push_back(std::move(s));
  }
  return stages;
}

const std::vector<Stage>& stage_table() {
  static const std::vector<Stage> stages = load_stage_table(course_root() / "stages" / "manifest.json");
  return stages;
}

const Stage* find_stage(const std::string& slug) {
  for (const auto& s : stage_table())
    if (s.slug == slug) return &s;
  return nullptr;
}

std::string stage_slugs() {
  std::string s;
  for (const auto& st : stage_table()) s += (s.empty() ? "" : ", ") + st.slug;
  return s;
}

}  // namespace course
