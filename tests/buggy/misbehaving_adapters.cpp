// A runner that misbehaves on purpose, for the grader's robustness tests. In case
// 02-one-append of cache-structure (the only plan with exactly two steps), it does what
// the environment variable KVCOURSE_MISBEHAVE says; every other case runs the reference.
//
//   segfault  dies by SIGSEGV               throw     an uncaught std::out_of_range
//   abort     std::abort()                  exit      std::exit(0) mid-case
//   hang      an endless loop (writes its pid to $KVCOURSE_MISBEHAVE_PIDFILE first)
//   print     prints a few lines, then answers
//   flood     prints 1 MiB, then answers    garbage   writes junk on the result channel
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#define run_cache_plan reference_run_cache_plan
#include "../../reference/adapters.cpp"
#undef run_cache_plan

namespace course {

std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  const char* env = std::getenv("KVCOURSE_MISBEHAVE");
  const std::string mode = env ? env : "";
  if (plan.size() == 2 && !mode.empty()) {
    if (mode == "segfault") {
      // Die by SIGSEGV as a bad pointer would, also in sanitizer builds (whose handlers
      // would otherwise report and exit with status 1).
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    } else if (mode == "abort") {
      std::abort();
    } else if (mode == "exit") {
      std::exit(0);
    } else if (mode == "hang") {
      // Leave a trace so the test can check that the grader killed this process.
      if (const char* pidfile = std::getenv("KVCOURSE_MISBEHAVE_PIDFILE")) {
        if (FILE* f = std::fopen(pidfile, "w")) {
          std::fprintf(f, "%d\n", int(::getpid()));
          std::fclose(f);
        }
      }
      volatile unsigned long spins = 0;
      while (true) spins = spins + 1;
    } else if (mode == "throw") {
      throw std::out_of_range("position 7 is past the end");
    } else if (mode == "print") {
      std::printf("hello from the learner\n");
      std::fprintf(stderr, "debug: plan has %zu steps\n", plan.size());
      std::printf("raw bytes that are not UTF-8: \xff\xfe\n");
    } else if (mode == "flood") {
      std::string line(1023, 'x');
      for (int i = 0; i < 1024; ++i) std::printf("%s\n", line.c_str());
    } else if (mode == "garbage") {
      const char junk[] = "\xff\xff\xff\x7fnot a message";
      (void)!::write(4, junk, sizeof junk);
      std::exit(0);
    }
  }
  return reference_run_cache_plan(plan);
}

}  // namespace course
