// A learner's adapters with a crash in them, for the crash-location tests (sandbox_test.cpp):
// in case 02-one-append of cache-structure (the only two-step plan), $KVCOURSE_CRASH picks
//   index   a std::vector read one past its end (caught by _GLIBCXX_ASSERTIONS)
//   null    a write through a null pointer (SIGSEGV)
//   at      std::vector::at one past the end (std::out_of_range, thrown by the library)
//   throw   a throw of the learner's own (std::invalid_argument)
//   pool    the course's PoolExhausted, thrown two calls deep
// and every other case runs the reference. Built like the learner's runner: debug info,
// -O2 and the library's cheap checks (runner-crash), and once without debug info, as a
// Release build would be (runner-crash-nodebug).
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "course/paged.hpp"

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

__attribute__((noinline)) float read_with_at(const std::vector<float>& row) {
  return row.at(row.size());
}

__attribute__((noinline)) void check_plan(size_t n) {
  if (n == 2) throw std::invalid_argument("check_plan: a two-step plan");
}

__attribute__((noinline)) void take_block() {
  throw PoolExhausted("take_block: all 4 blocks are in use");
}

__attribute__((noinline)) void grow_by_one() {
  take_block();
  g_nowhere = nullptr;  // not a tail call: grow_by_one stays on the stack
}

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  const char* env = std::getenv("KVCOURSE_CRASH");
  const std::string mode = env ? env : "";
  if (plan.size() == 2 && mode == "index") {
    volatile float x = read_past_end(plan[1].k);
    (void)x;
  }
  if (plan.size() == 2 && mode == "null") write_through_null(g_nowhere);
  if (plan.size() == 2 && mode == "at") {
    volatile float x = read_with_at(plan[1].k);
    (void)x;
  }
  if (mode == "throw") check_plan(plan.size());
  if (plan.size() == 2 && mode == "pool") grow_by_one();
  return reference_run_cache_plan(plan);
}

}  // namespace course
