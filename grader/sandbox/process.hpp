// A runner child process seen from the grader: started in the sandbox (sandbox.hpp), fed
// requests on its fd 3, read on its fd 4, with its stdout and stderr captured and its
// crash report read from fd 5. The grader stays alive whatever the child does: crash,
// hang, exit early, print a flood, write frames nobody asked for.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/sandbox.hpp"
#include "wire/protocol.hpp"

namespace course {

// A trusted helper program run to completion (make-fixtures, addr2line): never a runner.
struct Captured {
  bool started = false;    // the pipe and the fork worked
  bool too_much = false;   // it printed more than allowed, and was killed
  bool timed_out = false;  // it was still running at the deadline, and was killed
  int status = 0;          // its wait status, once started
  std::string output;      // its standard output, up to the limit
};

// Runs args[0] (searched on PATH when it has no '/') with args, no shell, its stdin
// /dev/null, its stderr the grader's or, with quiet, /dev/null. Reads its standard output,
// at most max_bytes of it, for at most `timeout` (zero: no limit).
Captured capture_output(const std::vector<std::string>& args, size_t max_bytes,
                        std::chrono::milliseconds timeout, bool quiet);

// What one exchange may take: CPU time of the runner (user + system, all its threads, as
// the kernel's clock for that process counts it, and the children it waited for), and a wall-clock backstop, many times larger,
// for a runner that sleeps or blocks instead of computing.
struct Budget {
  double cpu_seconds = 5;
  std::chrono::milliseconds wall{60000};
};

struct Exchange {
  enum class Outcome {
    response,   // the answer to this request arrived, whole and alone
    cpu_limit,  // the runner used its CPU budget without answering; it was killed
    timeout,    // the wall-clock backstop passed without an answer; it was killed
    died,       // the runner ended (signal or exit) before answering
    broken,     // the runner broke the channel (see `problem`); it was killed
  };
  Outcome outcome = Outcome::died;
  std::string response;   // with Outcome::response
  std::string output;     // what the runner printed on stdout/stderr during the exchange
  bool output_truncated = false;
  // With Outcome::died: "was killed by signal 11 (Segmentation fault) in KVCache::key
  // (src/kvcache.cpp:31): ...", "exited with status 0 before answering: ...".
  std::string death;
  std::string problem;    // with Outcome::broken: what was wrong with the channel
  double seconds = 0;     // wall-clock time of the exchange
  double cpu_seconds = 0;  // the runner's CPU time during it (-1: it could not be read)
};

class RunnerProcess {
 public:
  explicit RunnerProcess(std::string executable, sandbox::Config config = {});
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // Starts the child if it is not running. Throws std::runtime_error when it cannot
  // (missing runner, --sandbox=strict without the isolation, a failed sandbox step).
  void start();
  bool running() const { return pid_ > 0; }
  const sandbox::Isolation& isolation() const { return isolation_; }

  // Sends one request and waits for its answer within `budget`: the runner's CPU time is
  // read every 50 ms (Outcome::cpu_limit past budget.cpu_seconds), the wall clock is the
  // backstop (Outcome::timeout). An answer whose frame announces more than
  // `max_answer_bytes` is refused unread (Outcome::broken).
  Exchange exchange(const std::string& request, const Budget& budget,
                    size_t max_answer_bytes = kMaxMessageBytes);
  // The same with one limit in seconds for both (the trusted tools: make-fixtures).
  Exchange exchange(const std::string& request, std::chrono::milliseconds timeout,
                    size_t max_answer_bytes = kMaxMessageBytes) {
    return exchange(request, Budget{double(timeout.count()) / 1000.0, timeout}, max_answer_bytes);
  }

  // The runner's CPU time so far (user + system of all its threads and of the children it
  // waited for), in seconds; -1 when it cannot be read (no runner, /proc unavailable).
  double cpu_seconds() const;

  // Closes the channel and reaps the child (killing it if it does not leave promptly).
  void stop();

 private:
  void kill_and_reap();
  void end_case();
  void forget();
  std::string collect_death(const std::string& output);
  Exchange::Outcome take_answer(MessageReader& reader, uint64_t id, Exchange& ex);
  struct Ready {
    bool output = false;  // the runner's output has bytes (or closed)
    bool answer = false;  // the answer channel has bytes (or closed)
  };
  Ready wait_and_send(const std::string& frame, size_t& sent, bool output_open, int wait_ms);

  std::string executable_;
  sandbox::Config config_;
  sandbox::Isolation isolation_;
  pid_t pid_ = -1;
  pid_t runner_pid_ = -1;  // the runner itself (pid_ is its supervisor when supervised)
  bool supervised_ = false;
  bool reaped_ = false;   // not supervised: waitpid already collected it
  int request_fd_ = -1;   // our end of the child's fd 3
  int response_fd_ = -1;  // our end of the child's fd 4
  int crash_fd_ = -1;     // our end of the child's fd 5
  int output_fd_ = -1;    // child's stdout + stderr
  int status_fd_ = -1;    // supervised: the runner's wait status
  uint64_t next_id_ = 0;
};

// Kills every runner still alive (used on Ctrl-C and at exit). Async-signal-safe.
void kill_active_runners();

}  // namespace course
