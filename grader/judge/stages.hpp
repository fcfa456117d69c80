// The course's stages, in order, read from one source: stages/manifest.json.
//
//   {"course": "...",
//    "stages": [{"slug": "cache-structure",          stable id, the fixture folder's name
//                "title": "One layer's KV cache",
//                "folder": "01-cache-structure",      stages/<folder>/lesson.md
//                "files": ["src/kvcache.cpp", ...],   what the learner edits
//                "hints": ["...", "...", "..."],  at least three tiers, shown one at a
//                                                     time on request: 1 the idea or the
//                                                     invariant, 2 the approach, 3 (and
//                                                     on) near code, the guided path
//                "setup": {"weights": {...}},        optional: sent to the runner once,
//                                                     before the first case
//                "points": 20}, ...]}                 optional: the stage's weight in an
//                                                     autograder's score (default 10)
//
// A stage's number is its place in the list, from 1. The grader never runs without a
// valid manifest: a missing or malformed one is an error of the course (exit 2).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "wire/tensor.hpp"

namespace course {

struct Stage {
  int number = 0;
  std::string slug;
  std::string title;
  std::string folder;
  std::vector<std::string> files;
  std::vector<std::string> hints;  // tier 1 first; at least kMinHintTiers of them
  json setup = json::object();  // empty object: nothing to prepare
  double points = 10;           // its weight in an autograder's score, shared by its cases
};

constexpr int kMinHintTiers = 3;

struct CourseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The course's root folder: $KVCOURSE_ROOT, or the source folder the grader was built from.
std::filesystem::path course_root();

// Reads and checks a manifest (a regular file of at most 1 MB, JSON nested at most
// kMaxJsonDepth levels). Throws CourseError naming the file and the field.
std::vector<Stage> load_stage_table(const std::filesystem::path& manifest);
// The same for the manifest's text; `name` names it in messages.
std::vector<Stage> parse_stage_table(const std::string& text, const std::string& name);

// The course's stages, loaded once from course_root()/stages/manifest.json. Throws
// CourseError when it cannot be read.
const std::vector<Stage>& stage_table();
const Stage* find_stage(const std::string& slug);
std::string stage_slugs();  // "cache-structure, multi-layer-cache, ..."

}  // namespace course
