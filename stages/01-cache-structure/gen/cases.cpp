// Cases of stage cache-structure: one layer's KVCache.
//
// Every appended value is unique and says where it came from:
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

}  // namespace

namespace stage_cache_structure {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
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
  return cases;
}

}  // namespace stage_cache_structure

}  // namespace course
