// The course's stages as stages/manifest.json lists them, for the hand-out tests: they
// check what the export and the autograders do for every stage, however many there are.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace handout {

struct ManifestStage {
  int number = 0;
  std::string slug;
  double points = 10;  // the grader's default
};

inline nlohmann::json manifest() {
  return nlohmann::json::parse(
      testing_support::read_file(testing_support::source_dir() / "stages" / "manifest.json"));
}

inline std::vector<ManifestStage> manifest_stages() {
  const nlohmann::json doc = manifest();  // kept alive for the loop
  std::vector<ManifestStage> stages;
  for (const auto& s : doc["stages"])
    stages.push_back({int(stages.size()) + 1, s["slug"], s.value("points", 10.0)});
  return stages;
}

inline double total_points() {
  double total = 0;
  for (const ManifestStage& s : manifest_stages()) total += s.points;
  return total;
}

// Every file a learner edits, once each, in the order the stages name them.
inline std::vector<std::string> learner_files() {
  const nlohmann::json doc = manifest();
  std::vector<std::string> files;
  for (const auto& s : doc["stages"])
    for (const auto& f : s["files"])
      if (std::find(files.begin(), files.end(), f.get<std::string>()) == files.end())
        files.push_back(f);
  return files;
}

}  // namespace handout
