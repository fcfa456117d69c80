// A persistent pool of worker threads for the model's matrix products and attention.
//
// The pool never splits a sum: a task always computes whole outputs (a range of columns,
// of rows, or of heads), so a result does not depend on the thread count or on which
// thread ran which task (DETERMINISM.md, "Threads").
//
// Threads are created once, in the constructor, and wait between runs (a short spin, then
// a futex wait), so handing out work costs microseconds, not a thread creation.
#pragma once

#include <functional>
#include <memory>

namespace gpt2 {

class ThreadPool {
 public:
  // n_threads counts the calling thread: ThreadPool(1) starts no worker; ThreadPool(4)
  // starts 3. Values below 1 are treated as 1.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // Calls fn(task, thread) once for every task in [0, n_tasks) and returns when all have
  // finished. `thread` is in [0, size()) and tells which thread runs the call (useful
  // for per-thread scratch); the caller takes part as thread 0. fn must not throw.
  // If the pool is already running work (a call from inside a task, or from another
  // thread at the same moment), the tasks run one after another on the calling thread:
  // same results, no deadlock.
  void run(int n_tasks, const std::function<void(int task, int thread)>& fn);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// std::thread::hardware_concurrency(), or 1 if it is unknown.
int default_thread_count();

}  // namespace gpt2
