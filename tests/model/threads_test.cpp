// The persistent thread pool (threads.hpp).
#include "threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

TEST(threads, every_task_runs_exactly_once) {
  for (int n_threads : {1, 2, 3, 4, 8}) {
    gpt2::ThreadPool pool(n_threads);
    EXPECT_EQ(pool.size(), n_threads);
    for (int n_tasks : {0, 1, 2, 5, 100, 1000}) {
      std::vector<std::atomic<int>> runs(n_tasks);
      std::atomic<int> bad_thread{0};
      pool.run(n_tasks, [&](int task, int thread) {
        runs[task].fetch_add(1);
        if (thread < 0 || thread >= n_threads) bad_thread.fetch_add(1);
      });
      for (int t = 0; t < n_tasks; ++t) ASSERT_EQ(runs[t].load(), 1) << n_threads << " " << n_tasks;
      EXPECT_EQ(bad_thread.load(), 0);
    }
  }
}

TEST(threads, many_short_runs_in_a_row) {
  gpt2::ThreadPool pool(2);
  std::atomic<long> total{0};
  for (int run = 0; run < 2000; ++run)
    pool.run(4, [&](int task, int) { total.fetch_add(task + 1); });
  EXPECT_EQ(total.load(), 2000L * 10);
}

TEST(threads, a_run_inside_a_task_runs_serially_without_deadlock) {
  gpt2::ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.run(4, [&](int, int) {
    pool.run(3, [&](int, int thread) { inner.fetch_add(thread == 0 ? 1 : 100); });
  });
  // Nested runs use only the calling thread (thread index 0 for their tasks).
  EXPECT_EQ(inner.load(), 12);
}

TEST(threads, runs_from_two_threads_at_once_both_complete) {
  gpt2::ThreadPool pool(2);
  std::atomic<int> count{0};
  auto work = [&] {
    for (int i = 0; i < 500; ++i) pool.run(8, [&](int, int) { count.fetch_add(1); });
  };
  std::thread other(work);
  work();
  other.join();
  EXPECT_EQ(count.load(), 2 * 500 * 8);
}

TEST(threads, sizes_below_one_mean_one) {
  gpt2::ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1);
  EXPECT_GE(gpt2::default_thread_count(), 1);
}

}  // namespace
