// A runner child process seen from the grader: started with its own process group, fed
// requests on its fd 3, read on its fd 4, with its stdout and stderr captured. The
// grader stays alive whatever the child does: crash, hang, exit early, print a flood.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace course {

struct Exchange {
  enum class Outcome {
    response,  // a whole response arrived
    timeout,   // none within the time allowed; the runner was killed
    died,      // the runner ended (signal or exit) before answering
    broken,    // the runner wrote something that is not a message
  };
  Outcome outcome = Outcome::died;
  std::string response;   // with Outcome::response
  std::string output;     // what the runner printed on stdout/stderr during the exchange
  bool output_truncated = false;
  std::string death;      // with Outcome::died: "killed by signal 11 (Segmentation fault)", "exited with status 0"
  double seconds = 0;
};

class RunnerProcess {
 public:
  explicit RunnerProcess(std::string executable);
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // Starts the child if it is not running. Throws std::runtime_error when it cannot.
  void start();
  bool running() const { return pid_ > 0; }

  // Sends one request and waits for its response, at most `timeout`.
  Exchange exchange(const std::string& request, std::chrono::milliseconds timeout);

  // Closes the channel and reaps the child (killing it if it does not leave promptly).
  void stop();

  // The process group of the running child, for a signal handler; 0 when none.
  static pid_t active_group();

 private:
  void kill_and_reap();
  std::string describe_status(int status) const;

  std::string executable_;
  pid_t pid_ = -1;
  int request_fd_ = -1;   // our end of the child's fd 3
  int response_fd_ = -1;  // our end of the child's fd 4
  int output_fd_ = -1;    // child's stdout + stderr
};

// Kills every runner process group still alive (used on Ctrl-C and at exit).
void kill_active_runners();

}  // namespace course
