#include "sandbox/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "wire/protocol.hpp"

namespace course {

namespace {

std::atomic<pid_t> g_active_group{0};
constexpr size_t kMaxCapturedOutput = 64 * 1024;

void set_flags(int fd, bool nonblocking) {
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (nonblocking) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

pid_t RunnerProcess::active_group() { return g_active_group.load(); }

void kill_active_runners() {
  pid_t g = g_active_group.load();
  if (g > 0) ::kill(-g, SIGKILL);
}

RunnerProcess::RunnerProcess(std::string executable) : executable_(std::move(executable)) {}

RunnerProcess::~RunnerProcess() { stop(); }

void RunnerProcess::start() {
  if (pid_ > 0) return;
  if (::access(executable_.c_str(), X_OK) != 0)
    throw std::runtime_error("runner " + executable_ + " is missing or not executable (build it first)");
  ::signal(SIGPIPE, SIG_IGN);
  int req[2], resp[2], out[2], err[2];
  if (::pipe(req) || ::pipe(resp) || ::pipe(out) || ::pipe2(err, O_CLOEXEC))
    throw std::runtime_error(std::string("cannot create pipes: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    // Move the child's ends above the target numbers first so dup2 cannot clobber them.
    int r = ::fcntl(req[0], F_DUPFD, 10), w = ::fcntl(resp[1], F_DUPFD, 10), o = ::fcntl(out[1], F_DUPFD, 10);
    ::dup2(devnull, 0);
    ::dup2(o, 1);
    ::dup2(o, 2);
    ::dup2(r, kRequestFd);
    ::dup2(w, kResponseFd);
    for (int fd = 5; fd < 1024; ++fd)
      if (fd != err[1]) ::close(fd);
    char* argv[] = {const_cast<char*>(executable_.c_str()), nullptr};
    ::execv(argv[0], argv);
    int e = errno;
    (void)!::write(err[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(req[0]);
  ::close(resp[1]);
  ::close(out[1]);
  ::close(err[1]);
  int exec_errno = 0;
  ssize_t n = ::read(err[0], &exec_errno, sizeof exec_errno);
  ::close(err[0]);
  if (n == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    ::close(req[1]);
    ::close(resp[0]);
    ::close(out[0]);
    throw std::runtime_error("cannot start runner " + executable_ + ": " + std::strerror(exec_errno));
  }
  pid_ = pid;
  request_fd_ = req[1];
  response_fd_ = resp[0];
  output_fd_ = out[0];
  set_flags(request_fd_, true);
  set_flags(response_fd_, true);
  set_flags(output_fd_, true);
  g_active_group.store(pid_);
}

std::string RunnerProcess::describe_status(int status) const {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string text = "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (sig == SIGSEGV || sig == SIGBUS)
      text += ": a bad memory access, such as an index out of range or a null pointer";
    else if (sig == SIGABRT)
      text += ": abort(), a failed assertion, std::terminate, or heap corruption detected";
    else if (sig == SIGFPE)
      text += ": an arithmetic trap, such as an integer division by zero";
    return text;
  }
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status)) +
           " before answering: does the code under test call exit()?";
  return "ended (wait status " + std::to_string(status) + ")";
}

void RunnerProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  g_active_group.store(0);
  close_fd(request_fd_);
  close_fd(response_fd_);
  close_fd(output_fd_);
}

void RunnerProcess::stop() {
  if (pid_ <= 0) return;
  close_fd(request_fd_);  // end of requests: a healthy runner exits on its own
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      ::kill(-pid_, SIGKILL);  // anything it left behind in its group
      pid_ = -1;
      g_active_group.store(0);
      close_fd(response_fd_);
      close_fd(output_fd_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill_and_reap();
}

Exchange RunnerProcess::exchange(const std::string& request, std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  Exchange ex;
  start();
  const auto t0 = clock::now();
  const auto deadline = t0 + timeout;

  std::string frame;
  {
    uint32_t n = uint32_t(request.size());
    for (int i = 0; i < 4; ++i) frame += char((n >> (8 * i)) & 0xff);
    frame += request;
  }
  size_t sent = 0;
  MessageReader reader;
  bool output_open = true;
  char buf[1 << 16];

  auto capture = [&](const char* p, size_t n) {
    size_t room = kMaxCapturedOutput > ex.output.size() ? kMaxCapturedOutput - ex.output.size() : 0;
    ex.output.append(p, std::min(room, n));
    if (n > room) ex.output_truncated = true;
  };
  auto drain_output = [&] {
    while (output_open) {
      ssize_t r = ::read(output_fd_, buf, sizeof buf);
      if (r > 0) {
        capture(buf, size_t(r));
        continue;
      }
      if (r == 0) output_open = false;
      break;
    }
  };
  auto finish = [&](Exchange::Outcome outcome) {
    ex.outcome = outcome;
    ex.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return ex;
  };

  while (true) {
    auto now = clock::now();
    if (now >= deadline) {
      drain_output();
      kill_and_reap();
      return finish(Exchange::Outcome::timeout);
    }
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
    int wait_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    int rc = ::poll(fds, nfds, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    }
    if (req_index >= 0 && (fds[req_index].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(request_fd_, frame.data() + sent, frame.size() - sent);
      if (w > 0) sent += size_t(w);
      else if (w < 0 && errno != EAGAIN && errno != EINTR) sent = frame.size();  // child gone; EOF below tells
    }
    if (out_index >= 0 && (fds[out_index].revents & (POLLIN | POLLHUP))) drain_output();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = ::read(response_fd_, buf, sizeof buf);
      if (r > 0) {
        reader.feed(buf, size_t(r));
        if (reader.oversized()) {
          drain_output();
          kill_and_reap();
          return finish(Exchange::Outcome::broken);
        }
        if (reader.complete()) {
          ex.response = reader.take();
          drain_output();
          return finish(Exchange::Outcome::response);
        }
      } else if (r == 0) {
        // The runner closed its end: it is ending. Collect its status and last words.
        int status = 0;
        pid_t got = 0;
        for (int i = 0; i < 200 && got == 0; ++i) {
          got = ::waitpid(pid_, &status, WNOHANG);
          if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        drain_output();
        if (got == pid_) {
          ex.death = describe_status(status);
          ::kill(-pid_, SIGKILL);
          pid_ = -1;
          g_active_group.store(0);
          close_fd(request_fd_);
          close_fd(response_fd_);
          close_fd(output_fd_);
        } else {
          ex.death = "closed the grader's channel and did not exit";
          kill_and_reap();
        }
        return finish(reader.buffered() > 0 ? Exchange::Outcome::broken : Exchange::Outcome::died);
      }
    }
  }
}

}  // namespace course
