// The course's stages, in order. stages/manifest.json says the same for people (titles,
// files to edit, hints); a test checks that the two agree.
#pragma once

#include <string>
#include <vector>

#include "diagnose.hpp"

namespace course {

struct Stage {
  int number;
  std::string slug;    // stable id, the fixture folder's name
  std::string title;
  std::string folder;  // stages/<folder>/lesson.md
  bool available;      // fixtures and runner support exist
  Diagnoser diagnose;  // may be null
  json setup;          // sent to the runner before the first case (empty: nothing)
};

const std::vector<Stage>& stage_table();
const Stage* find_stage(const std::string& slug);
std::string stage_slugs();  // "cache-structure, multi-layer-cache, ..."

}  // namespace course
