// A runner whose cache is right and whose adapter is not: run_cache_plan's snapshots take
// their values from key(h, p), as an adapter that copies the key loop for the values would.
// value() itself is right, so the grader's own reading (read_kvcache) passes. Issue 25: the
// localization must say "your snapshot's values", never that value() returned the key
// (catalogue_test.cpp). It is not a catalogued mistake: it matches none on every case.
#define run_cache_plan reference_run_cache_plan
#include "../../reference/adapters.cpp"
#undef run_cache_plan

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  std::vector<CacheSnapshot> snapshots = reference_run_cache_plan(plan);
  for (CacheSnapshot& s : snapshots) s.values = s.keys;
  return snapshots;
}

}  // namespace course
