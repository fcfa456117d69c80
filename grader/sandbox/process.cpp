#include "sandbox/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include "sandbox/crash.hpp"

namespace course {

namespace {

constexpr size_t kMaxCapturedOutput = 64 * 1024;
constexpr size_t kMaxCrashRecord = 4096;

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is there without blocking, at most `limit` bytes kept. Returns false at the
// end of the stream.
bool read_available(int fd, std::string& into, size_t limit, bool* truncated = nullptr) {
  char buf[1 << 16];
  while (true) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r > 0) {
      size_t room = limit > into.size() ? limit - into.size() : 0;
      into.append(buf, std::min(room, size_t(r)));
      if (size_t(r) > room && truncated) *truncated = true;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    return r != 0;
  }
}

std::string describe_status(int status, const CrashSite& site) {
  std::string where = site.where.empty() ? "" : " " + site.where;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string text = "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" + where;
    if (!site.check.empty())
      text += ": " + site.check;
    else if (sig == SIGSEGV || sig == SIGBUS)
      text += ": a bad memory access, such as an index out of range or a null pointer";
    else if (sig == SIGABRT)
      text += ": abort(), a failed assertion, std::terminate, or heap corruption detected";
    else if (sig == SIGFPE)
      text += ": an arithmetic trap, such as an integer division by zero";
    else if (sig == SIGXCPU)
      text += ": it used up its CPU time limit";
    else if (sig == SIGXFSZ)
      text += ": it wrote a file larger than the sandbox allows";
    return text;
  }
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status)) +
           " before answering: does the code under test call exit()?";
  return "ended (wait status " + std::to_string(status) + ")";
}

// The runner's CPU time in seconds: its threads' own time from the kernel's clock for
// that process (clock_getcpuclockid: nanoseconds, as the scheduler counts it), plus the
// children it waited for (cutime + cstime of /proc/PID/stat, in clock ticks). Where that
// clock cannot be read, utime + stime of /proc/PID/stat instead, in ticks (10 ms). -1
// when neither can be read. The speed stage times exchanges of a few tenths of a second,
// so the ticks alone would be a few percent off.
double process_cpu_seconds(pid_t pid) {
  if (pid <= 0) return -1;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "pid (comm) state ppid ...": the name may hold spaces and parentheses, so the fields
  // are counted from the last ')'. utime is field 14, stime 15, cutime 16, cstime 17.
  const char* p = std::strrchr(buf, ')');
  if (!p) return -1;
  ++p;
  int field = 2;
  unsigned long long own_ticks = 0, children_ticks = 0;
  while (*p && field < 17) {
    while (*p == ' ') ++p;
    ++field;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (field == 14 || field == 15) own_ticks += v;
    if (field >= 16) children_ticks += v;
    p = end && end != p ? end : p + std::strcspn(p, " ");
  }
  if (field < 17) return -1;
  static const long hz = ::sysconf(_SC_CLK_TCK);
  const double tick = 1.0 / double(hz > 0 ? hz : 100);
  clockid_t clock{};
  timespec ts{};
  if (::clock_getcpuclockid(pid, &clock) == 0 && ::clock_gettime(clock, &ts) == 0)
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9 + double(children_ticks) * tick;
  return double(own_ticks + children_ticks) * tick;
}

uint64_t first_request_id() {
  std::random_device rd;
  return (uint64_t(rd()) << 32 | rd()) & 0x0000ffffffffffffull;
}

}  // namespace

void kill_active_runners() { sandbox::kill_runners(); }

RunnerProcess::RunnerProcess(std::string executable, sandbox::Config config)
    : executable_(std::move(executable)), config_(config), next_id_(first_request_id()) {}

RunnerProcess::~RunnerProcess() { stop(); }

void RunnerProcess::start() {
  if (pid_ > 0) return;
  if (::access(executable_.c_str(), X_OK) != 0)
    throw std::runtime_error("runner " + executable_ + " is missing or not executable (build it first)");
  ::signal(SIGPIPE, SIG_IGN);
  isolation_ = sandbox::probe(config_.mode);
  sandbox::Spawned s =
      sandbox::spawn(executable_, isolation_, config_.limits, config_.files, config_.slot);
  pid_ = s.pid;
  reaped_ = false;
  supervised_ = s.supervised;
  request_fd_ = s.request_fd;
  response_fd_ = s.response_fd;
  crash_fd_ = s.crash_fd;
  output_fd_ = s.output_fd;
  status_fd_ = s.status_fd;
  runner_pid_ = supervised_ ? sandbox::runner_of(pid_) : pid_;
  for (int fd : {request_fd_, response_fd_, crash_fd_, output_fd_}) set_nonblocking(fd);
}

// What the runner started during the case dies with the case; the runner stays for the
// next one.
void RunnerProcess::end_case() {
  if (isolation_.mode == sandbox::Mode::off || pid_ <= 0 || runner_pid_ <= 0) return;
  if (supervised_)
    sandbox::kill_descendants(pid_, runner_pid_, false);  // the namespace's first process reaps
  else
    sandbox::kill_strays(runner_pid_);  // another runner grading beside it is left alone
}

void RunnerProcess::forget() {
  sandbox::forget_runner(pid_);
  pid_ = -1;
  for (int* fd : {&request_fd_, &response_fd_, &crash_fd_, &output_fd_, &status_fd_}) close_fd(*fd);
  sandbox::sweep(isolation_, config_.slot);
}

void RunnerProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  if (!supervised_) ::kill(-pid_, SIGKILL);
  if (!reaped_) {
    ::kill(pid_, SIGKILL);  // the namespace's first process: the kernel kills the rest
    ::waitpid(pid_, nullptr, 0);
  }
  forget();
}

void RunnerProcess::stop() {
  if (pid_ <= 0) return;
  close_fd(request_fd_);  // end of requests: a healthy runner exits on its own
  if (supervised_) {
    // The first process writes the runner's status, then exits: wait for that event.
    pollfd pfd{status_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 500) > 0) {
      ::waitpid(pid_, nullptr, 0);
      forget();
    } else {
      kill_and_reap();
    }
    return;
  }
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      ::kill(-pid_, SIGKILL);  // anything it left behind in its group
      forget();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill_and_reap();
}

// The runner closed its answer channel: it is ending. Its status (from the supervisor,
// or from waitpid), where it crashed, and its last words.
std::string RunnerProcess::collect_death(const std::string& output) {
  int status = 0;
  bool known = false;
  if (supervised_) {
    pollfd pfd{status_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 2000) > 0 && ::read(status_fd_, &status, sizeof status) == sizeof status) known = true;
  } else {
    for (int i = 0; i < 200 && !known; ++i) {
      known = ::waitpid(pid_, &status, WNOHANG) == pid_;
      if (!known) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reaped_ = known;
  }
  if (!known) return "closed the grader's channel and did not exit";
  std::string record;
  if (WIFSIGNALED(status)) read_available(crash_fd_, record, kMaxCrashRecord);
  std::string text = describe_status(status, locate_crash(executable_, record, output));
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
    const std::string reason = sandbox::take_kill_reason(config_.slot);
    if (!reason.empty()) text += ": " + reason;
  }
  return text;
}

// A whole frame is in: it is the answer only if it carries this request's id and nothing
// follows it (its nesting is bounded by the answer's parser, judge/answer.cpp).
Exchange::Outcome RunnerProcess::take_answer(MessageReader& reader, uint64_t id, Exchange& ex) {
  Frame frame = reader.take();
  if (frame.id != id) {
    ex.problem = "it answered request #" + std::to_string(frame.id) + " while request #" + std::to_string(id) +
                 " was asked (a frame written on file descriptor 4 by the code under test?)";
    return Exchange::Outcome::broken;
  }
  if (reader.buffered() > 0) {
    ex.problem = "it wrote " + std::to_string(reader.buffered()) + " more bytes after its answer";
    return Exchange::Outcome::broken;
  }
  ex.response = std::move(frame.payload);
  return Exchange::Outcome::response;
}

Captured capture_output(const std::vector<std::string>& args, size_t max_bytes,
                        std::chrono::milliseconds timeout, bool quiet) {
  using clock = std::chrono::steady_clock;
  Captured c;
  int out[2];
  if (args.empty() || ::pipe2(out, O_CLOEXEC) != 0) return c;
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return c;
  }
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    if (quiet) ::dup2(devnull, 2);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  c.started = true;
  ::close(out[1]);
  const auto deadline = clock::now() + timeout;
  char buf[65536];
  while (true) {
    int wait_ms = -1;
    if (timeout.count() > 0) {
      wait_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count());
      if (wait_ms <= 0) {
        c.timed_out = true;
        break;
      }
    }
    pollfd pfd{out[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      c.timed_out = ready == 0;
      break;
    }
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (c.output.size() + size_t(n) > max_bytes) {
      c.too_much = true;
      break;
    }
    c.output.append(buf, size_t(n));
  }
  ::close(out[0]);
  if (c.too_much || c.timed_out) ::kill(pid, SIGKILL);
  while (::waitpid(pid, &c.status, 0) < 0 && errno == EINTR) {
  }
  return c;
}

// One wait on the runner: for its answer, its output and, while the request is not all
// written, room to write more of it (written at once). What is ready to read.
RunnerProcess::Ready RunnerProcess::wait_and_send(const std::string& frame, size_t& sent, bool output_open,
                                                  int wait_ms) {
  pollfd fds[3];
  int nfds = 0;
  fds[nfds++] = {response_fd_, POLLIN, 0};
  int out_index = -1, req_index = -1;
  if (output_open) {
    out_index = nfds;
    fds[nfds++] = {output_fd_, POLLIN, 0};
  }
  if (sent < frame.size()) {
    req_index = nfds;
    fds[nfds++] = {request_fd_, POLLOUT, 0};
  }
  if (::poll(fds, nfds, wait_ms) < 0) {
    if (errno == EINTR) return {};
    throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
  }
  if (req_index >= 0 && (fds[req_index].revents & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t w = ::write(request_fd_, frame.data() + sent, frame.size() - sent);
    if (w > 0) sent += size_t(w);
    else if (w < 0 && errno != EAGAIN && errno != EINTR) sent = frame.size();  // child gone; EOF tells
  }
  Ready ready;
  ready.output = out_index >= 0 && (fds[out_index].revents & (POLLIN | POLLHUP));
  ready.answer = fds[0].revents & (POLLIN | POLLHUP | POLLERR);
  return ready;
}

double RunnerProcess::cpu_seconds() const {
  return pid_ > 0 ? process_cpu_seconds(runner_pid_) : -1;
}

Exchange RunnerProcess::exchange(const std::string& request, const Budget& budget,
                                 size_t max_answer_bytes) {
  using clock = std::chrono::steady_clock;
  constexpr int kCpuTickMs = 50;  // how often the runner's CPU time is read while it works
  Exchange ex;
  start();
  const auto t0 = clock::now();
  const auto deadline = t0 + budget.wall;
  const double cpu0 = cpu_seconds();
  auto cpu_used = [&] {
    const double now = cpu_seconds();
    return now < 0 || cpu0 < 0 ? -1.0 : now - cpu0;
  };
  const uint64_t id = next_id_++;
  const std::string frame = encode_frame(id, request);
  size_t sent = 0;
  MessageReader reader(max_answer_bytes);
  bool output_open = true;

  auto drain_output = [&] {
    if (output_open) output_open = read_available(output_fd_, ex.output, kMaxCapturedOutput, &ex.output_truncated);
  };
  auto finish = [&](Exchange::Outcome outcome) {
    drain_output();
    // Read before the runner is killed or reaped (its /proc entry goes with it).
    if (outcome != Exchange::Outcome::cpu_limit) ex.cpu_seconds = cpu_used();
    if (outcome == Exchange::Outcome::timeout || outcome == Exchange::Outcome::cpu_limit ||
        outcome == Exchange::Outcome::broken)
      kill_and_reap();
    if (outcome == Exchange::Outcome::response) end_case();
    ex.outcome = outcome;
    ex.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return std::move(ex);  // called once, as the exchange's last step
  };

  // Bytes already waiting were written before this request existed: nobody asked for them.
  std::string early;
  if (read_available(response_fd_, early, 1 << 20) && !early.empty()) {
    ex.problem = "it wrote " + std::to_string(early.size()) +
                 " bytes on the answer channel before this case's request";
    return finish(Exchange::Outcome::broken);
  }

  while (true) {
    auto now = clock::now();
    if (const double used = cpu_used(); used >= budget.cpu_seconds) {
      ex.cpu_seconds = used;
      return finish(Exchange::Outcome::cpu_limit);
    }
    if (now >= deadline) return finish(Exchange::Outcome::timeout);
    int wait_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    const Ready ready = wait_and_send(frame, sent, output_open, std::min(wait_ms, kCpuTickMs));
    if (ready.output) drain_output();
    if (!ready.answer) continue;
    char buf[1 << 16];
    ssize_t r = ::read(response_fd_, buf, sizeof buf);
    if (r > 0) {
      reader.feed(buf, size_t(r));
      if (reader.oversized()) {
        ex.problem = "its answer announces " + std::to_string(reader.announced()) + " bytes, more than the " +
                     std::to_string(max_answer_bytes) + " an answer to this case can need";
        return finish(Exchange::Outcome::broken);
      }
      if (reader.complete()) return finish(take_answer(reader, id, ex));
    } else if (r == 0) {
      drain_output();
      ex.death = collect_death(ex.output);
      if (reader.buffered() > 0) {
        ex.problem = "its answer was cut off after " + std::to_string(reader.buffered()) + " bytes (it " + ex.death + ")";
        return finish(Exchange::Outcome::broken);
      }
      kill_and_reap();
      return finish(Exchange::Outcome::died);
    } else if (errno != EAGAIN && errno != EINTR) {
      throw std::runtime_error(std::string("reading the runner's answer failed: ") + std::strerror(errno));
    }
  }
}

}  // namespace course
