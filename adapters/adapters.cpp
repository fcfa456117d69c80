// Your adapters: the glue between the grader's fixtures and your cache. The runner turns a
// fixture's input into the arguments below, calls the function, and sends what it returns
// to the grader. The declarations, with the exact contract, are in
// include/course/adapters.hpp.
//
// Each function throws "not implemented yet" until you replace its body.
#include "course/adapters.hpp"

#include "course/not_implemented.hpp"

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  // TODO: run the plan on a std::vector<KVCache>, then snapshot every cache through
  // key(h, p) / value(h, p) in [12, seq, 64] order (head outermost, then pos, then dim).
  (void)plan;
  not_implemented("run_cache_plan (adapters/adapters.cpp)");
}

std::vector<ShapeRow> run_model_cache_shapes(const std::vector<int>& appends) {
  // TODO: a fresh ModelCache, one append per entry of `appends` to that layer, then one
  // row {12, length, 64} per layer, layer 0 first.
  (void)appends;
  not_implemented("run_model_cache_shapes (adapters/adapters.cpp)");
}

CloneShapes run_model_cache_clone(const std::vector<int>& before, const std::vector<int>& after_original,
                                  const std::vector<int>& after_clone) {
  // TODO: appends `before`, clone, `after_original` to the original, `after_clone` to the
  // copy; return the shape rows of both.
  (void)before;
  (void)after_original;
  (void)after_clone;
  not_implemented("run_model_cache_clone (adapters/adapters.cpp)");
}

}  // namespace course
