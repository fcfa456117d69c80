// Cases of stages cache-structure and multi-layer-cache.
//
// In stage 1 every appended value is unique and says where it came from:
//   k[h*64 + d] = append_id * 768 + h * 64 + d + 1,   v = -k
// (append_id counts appends in plan order), so a value in the wrong place, in the wrong
// cache or in K instead of V shows which mistake moved it. All are integers below 2^24,
// exact in float32.
#include "gen/cases.hpp"
#include "wire/shape.hpp"

namespace course {

namespace {

constexpr int kDModel = shape::kDModel;

class PlanBuilder {
 public:
  PlanBuilder& create() {
    plan_.push_back({{"op", "create"}});
    return *this;
  }
  PlanBuilder& append(int cache, int times = 1) {
    for (int t = 0; t < times; ++t) {
      Tensor k, v;
      k.shape = v.shape = {kDModel};
      k.axes = v.axes = {"feature"};
      for (int i = 0; i < kDModel; ++i) {
        float x = float(next_append_ * kDModel + i + 1);
        k.data.push_back(x);
        v.data.push_back(-x);
      }
      ++next_append_;
      plan_.push_back({{"op", "append"}, {"cache", cache}, {"k", tensor_to_json(k, TensorEncoding::numbers)},
                       {"v", tensor_to_json(v, TensorEncoding::numbers)}});
    }
    return *this;
  }
  PlanBuilder& clone(int cache) {
    plan_.push_back({{"op", "clone"}, {"cache", cache}});
    return *this;
  }
  json input() const { return {{"plan", plan_}}; }

 private:
  json plan_ = json::array();
  int next_append_ = 0;
};

CaseSpec plan_case(std::string name, std::string checks, const PlanBuilder& plan) {
  return {"cache-structure", std::move(name), std::move(checks), "run_cache_plan", plan.input(), nullptr};
}

// The grader's own reading of a KVCache: n appends of the self-describing rows, no plan.
CaseSpec read_case(std::string name, std::string checks, int n) {
  Tensor k, v;
  k.shape = v.shape = {n, kDModel};
  k.axes = v.axes = {"append", "feature"};
  for (int a = 0; a < n; ++a)
    for (int i = 0; i < kDModel; ++i) {
      k.data.push_back(float(a * kDModel + i + 1));
      v.data.push_back(-float(a * kDModel + i + 1));
    }
  return {"cache-structure", std::move(name), std::move(checks), "read_kvcache",
          {{"keys", tensor_to_json(k, TensorEncoding::numbers)},
           {"values", tensor_to_json(v, TensorEncoding::numbers)}},
          nullptr};
}

CaseSpec shapes_case(std::string name, std::string checks, std::vector<int> appends) {
  return {"multi-layer-cache", std::move(name), std::move(checks), "run_model_cache_shapes",
          {{"appends", appends}}, nullptr};
}

CaseSpec clone_case(std::string name, std::string checks, std::vector<int> before, std::vector<int> after_original,
                    std::vector<int> after_clone) {
  return {"multi-layer-cache", std::move(name), std::move(checks), "run_model_cache_clone",
          {{"before", before}, {"after_original", after_original}, {"after_clone", after_clone}}, nullptr};
}

}  // namespace

std::vector<CaseSpec> cache_cases() {
  std::vector<CaseSpec> cases;
  // ---- stage 1: one layer's cache
  cases.push_back(plan_case("01-empty", "A new cache has length 0 and logical shape [12, 0, 64].",
                            PlanBuilder().create()));
  cases.push_back(plan_case("02-one-append", "One append makes length 1, and key(h, 0) is head h's band of the appended k.",
                            PlanBuilder().create().append(0)));
  cases.push_back(plan_case("03-three-appends",
                            "Three appends give [12, 3, 64] with every head reading its own band of every position.",
                            PlanBuilder().create().append(0, 3)));
  cases.push_back(plan_case("04-long", "Twenty appends: each adds exactly one position, in order.",
                            PlanBuilder().create().append(0, 20)));
  cases.push_back(plan_case("05-two-caches", "Two caches appended in turn keep separate histories.",
                            PlanBuilder().create().create().append(0).append(1).append(0).append(1, 2)));
  cases.push_back(plan_case("06-clone-then-append",
                            "After clone(), appending to the copy or to the original leaves the other as it was.",
                            PlanBuilder().create().append(0, 2).clone(0).append(1).append(0, 2)));
  cases.push_back(plan_case("07-clone-empty", "A clone of an empty cache is empty and grows on its own.",
                            PlanBuilder().create().clone(0).append(1, 2)));
  cases.push_back(plan_case("08-clone-of-clone", "A clone of a clone is as independent as the first clone.",
                            PlanBuilder().create().append(0).clone(0).append(1).clone(1).append(2, 2).append(0)));
  cases.push_back(plan_case("09-clone-an-older-cache",
                            "clone(i) copies cache i, whichever cache was created last: here the "
                            "clones copy caches made two and three steps earlier.",
                            PlanBuilder().create().append(0, 2).create().append(1).clone(0).append(2).clone(1).append(0)));

  cases.push_back(read_case("10-read-by-the-grader",
                            "The grader appends three positions to a KVCache itself and reads "
                            "length(), key(h, p) and value(h, p) without your adapter.",
                            3));

  // ---- stage 2: twelve layers
  cases.push_back(shapes_case("01-no-appends", "A fresh ModelCache has 12 layers, each [12, 0, 64].", {}));
  cases.push_back(shapes_case("02-lesson-example", "Appends [0, 0, 5] give layer 0 length 2, layer 5 length 1, the rest 0.",
                              {0, 0, 5}));
  cases.push_back(shapes_case("03-every-layer-once", "One append to each layer gives every layer length 1.",
                              {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  cases.push_back(shapes_case("04-one-layer-many", "Six appends to layer 4 leave the other eleven layers empty.",
                              {4, 4, 4, 4, 4, 4}));
  cases.push_back(shapes_case("05-uneven", "Each layer's length counts only the appends made to that layer.",
                              {11, 3, 3, 7, 0, 3, 11, 7, 3, 1}));
  cases.push_back(clone_case("06-clone-then-diverge",
                             "After clone(), appends to the original and to the copy stay on their own side.",
                             {0, 1, 1, 5}, {0, 0}, {11}));
  cases.push_back(clone_case("07-clone-then-untouched", "A clone with no later appends equals its original.", {2, 2, 9},
                             {}, {}));
  cases.push_back(clone_case("08-clone-empty", "Cloning an empty ModelCache gives twelve empty, independent layers.", {},
                             {2}, {3, 3}));
  return cases;
}

}  // namespace course
