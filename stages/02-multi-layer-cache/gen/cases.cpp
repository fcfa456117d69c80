// Cases of stage multi-layer-cache: ModelCache's twelve layers, their shapes and clones.
#include "gen/cases.hpp"

namespace course {

namespace {

CaseSpec shapes_case(std::string name, std::string checks, std::vector<int> appends) {
  return {"multi-layer-cache",      std::move(name),        std::move(checks),
          "run_model_cache_shapes", {{"appends", appends}}, nullptr};
}

CaseSpec clone_case(std::string name, std::string checks, std::vector<int> before,
                    std::vector<int> after_original, std::vector<int> after_clone) {
  return {"multi-layer-cache",
          std::move(name),
          std::move(checks),
          "run_model_cache_clone",
          {{"before", before}, {"after_original", after_original}, {"after_clone", after_clone}},
          nullptr};
}

}  // namespace

namespace stage_multi_layer_cache {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(
      shapes_case("01-no-appends", "A fresh ModelCache has 12 layers, each [12, 0, 64].", {}));
  cases.push_back(shapes_case(
      "02-lesson-example", "Appends [0, 0, 5] give layer 0 length 2, layer 5 length 1, the rest 0.",
      {0, 0, 5}));
  cases.push_back(shapes_case("03-every-layer-once",
                              "One append to each layer gives every layer length 1.",
                              {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  cases.push_back(shapes_case("04-one-layer-many",
                              "Six appends to layer 4 leave the other eleven layers empty.",
                              {4, 4, 4, 4, 4, 4}));
  cases.push_back(shapes_case("05-uneven",
                              "Each layer's length counts only the appends made to that layer.",
                              {11, 3, 3, 7, 0, 3, 11, 7, 3, 1}));
  cases.push_back(
      clone_case("06-clone-then-diverge",
                 "After clone(), appends to the original and to the copy stay on their own side.",
                 {0, 1, 1, 5}, {0, 0}, {11}));
  cases.push_back(clone_case("07-clone-then-untouched",
                             "A clone with no later appends equals its original.", {2, 2, 9}, {},
                             {}));
  cases.push_back(clone_case("08-clone-empty",
                             "Cloning an empty ModelCache gives twelve empty, independent layers.",
                             {}, {2}, {3, 3}));
  return cases;
}

}  // namespace stage_multi_layer_cache

}  // namespace course
