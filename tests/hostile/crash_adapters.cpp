// A learner's adapters with a crash in them, for the crash-location tests (sandbox_test.cpp):
// in case 02-one-append of cache-structure (the only two-step plan), $KVCOURSE_CRASH picks
//   index   a std::vector read one past its end (caught by _GLIBCXX_ASSERTIONS)
//   null    a write through a null pointer (SIGSEGV)
// and every other case runs the reference. Built like the learner's runner: debug info,
// -O2 and the library's cheap checks.
#include <cstdlib>
#include <string>
#include <vector>

#define run_cache_plan reference_run_cache_plan
#include "../../reference/adapters.cpp"
#undef run_cache_plan

namespace course {

__attribute__((noinline)) float read_past_end(const std::vector<float>& row) {
  return row[row.size()];
}

float* volatile g_nowhere = nullptr;

__attribute__((noinline)) void write_through_null(float* where) {
  *where = 1.0f;
}

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  const char* env = std::getenv("KVCOURSE_CRASH");
  const std::string mode = env ? env : "";
  if (plan.size() == 2 && mode == "index") {
    volatile float x = read_past_end(plan[1].k);
    (void)x;
  }
  if (plan.size() == 2 && mode == "null") write_through_null(g_nowhere);
  return reference_run_cache_plan(plan);
}

}  // namespace course
