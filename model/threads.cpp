#include "threads.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gpt2 {

namespace {

// How long a waiting thread polls before it sleeps in the kernel. Runs in a decode step
// follow each other within microseconds, so a short poll saves a futex wake-up per run;
// past it, an idle pool costs no CPU. After the first PAUSE_ITERATIONS the poll yields
// the CPU, so that on a busy machine (more threads than cores) a thread that polls does
// not keep the one it waits for off the CPU.
constexpr int SPIN_ITERATIONS = 4000;
constexpr int PAUSE_ITERATIONS = 200;

inline void cpu_relax(int iteration) {
#if defined(__x86_64__) || defined(__i386__)
  if (iteration < PAUSE_ITERATIONS) {
    __builtin_ia32_pause();
    return;
  }
#endif
  (void)iteration;
  std::this_thread::yield();
}

}  // namespace

struct ThreadPool::State {
  int n_threads = 1;
  std::vector<std::thread> workers;
  std::mutex run_mutex;  // held for the whole of one run()

  // One "generation" per run(): workers wake when it changes.
  std::atomic<uint32_t> generation{0};
  std::atomic<bool> stopping{false};
  // The current run.
  const std::function<void(int, int)>* fn = nullptr;
  int n_tasks = 0;
  std::atomic<int> next_task{0};
  std::atomic<int> workers_busy{0};

  void drain(int thread) {
    for (;;) {
      const int task = next_task.fetch_add(1, std::memory_order_relaxed);
      if (task >= n_tasks) return;
      (*fn)(task, thread);
    }
  }

  void worker_loop(int thread) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t now = generation.load(std::memory_order_acquire);
      for (int i = 0; i < SPIN_ITERATIONS && now == seen; ++i) {
        cpu_relax(i);
        now = generation.load(std::memory_order_acquire);
      }
      while (now == seen) {
        generation.wait(seen, std::memory_order_acquire);
        now = generation.load(std::memory_order_acquire);
      }
      seen = now;
      if (stopping.load(std::memory_order_acquire)) return;
      drain(thread);
      if (workers_busy.fetch_sub(1, std::memory_order_acq_rel) == 1) workers_busy.notify_one();
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : state_(std::make_unique<State>()) {
  state_->n_threads = n_threads < 1 ? 1 : n_threads;
  for (int t = 1; t < state_->n_threads; ++t) {
    state_->workers.emplace_back([s = state_.get(), t] { s->worker_loop(t); });
  }
}

ThreadPool::~ThreadPool() {
  state_->stopping.store(true, std::memory_order_release);
  state_->generation.fetch_add(1, std::memory_order_release);
  state_->generation.notify_all();
  for (auto& w : state_->workers) w.join();
}

int ThreadPool::size() const { return state_->n_threads; }

void ThreadPool::run(int n_tasks, const std::function<void(int task, int thread)>& fn) {
  if (n_tasks <= 0) return;
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.run_mutex, std::defer_lock);
  if (s.workers.empty() || n_tasks == 1 || !lock.try_lock()) {
    for (int task = 0; task < n_tasks; ++task) fn(task, 0);
    return;
  }
  s.fn = &fn;
  s.n_tasks = n_tasks;
  s.next_task.store(0, std::memory_order_relaxed);
  s.workers_busy.store(static_cast<int>(s.workers.size()), std::memory_order_relaxed);
  s.generation.fetch_add(1, std::memory_order_release);
  s.generation.notify_all();
  s.drain(0);
  int busy = s.workers_busy.load(std::memory_order_acquire);
  for (int i = 0; i < SPIN_ITERATIONS && busy != 0; ++i) {
    cpu_relax(i);
    busy = s.workers_busy.load(std::memory_order_acquire);
  }
  while (busy != 0) {
    s.workers_busy.wait(busy, std::memory_order_acquire);
    busy = s.workers_busy.load(std::memory_order_acquire);
  }
  s.fn = nullptr;
}

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace gpt2
