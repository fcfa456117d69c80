// A hostile submission, for the sandbox's tests (hostile_test.cpp). It is what a learner
// could put in adapters/adapters.cpp: its own main() (so the course's runner main is not
// even linked), the channel spoken by hand, and one attack chosen by $KVCOURSE_HOSTILE.
// The attack happens in case 02-one-append of cache-structure (or in the stage's setup);
// unless the attack is to forge answers, it answers every case honestly through the
// course's adapter table, so that a case passes only when its answer was computed.
// What each attack achieved is printed on stdout (the learner's output), so the tests
// can tell an attack that failed from one that was never tried.
//
//   steal         answers with fixtures/<stage>/<case>.json's "expected" (forges); prints
//                 whether reference/decode.cpp could be read
//   setsid        a setsid() child that waits for the grader to finish, then overwrites
//                 $KVCOURSE_HOSTILE_TARGET (the results file) with a forged full score
//   signal        SIGSTOP then SIGKILL to its parent and to every process it can see
//   write         appends to each of $KVCOURSE_HOSTILE_TARGET's paths (':'-separated)
//   stray         a well-formed frame with another id before the answer
//   wrong_id      the answer with another id
//   nested        an answer nested 100000 levels deep
//   huge          an answer of 10^8 floats (about 1 GB)
//   fork_bomb     forks until it cannot, every child in a session of its own
//   alloc         allocates and touches 6 GB
//   spin          an endless loop
//   sleep         sleeps for ever (pause), using no CPU
//   fill_disk     writes one file until the file system or the limit stops it
//   escapes       prints terminal escape sequences and a fake "PASS" line
//   network       connects to 127.0.0.1:$KVCOURSE_HOSTILE_PORT and to the abstract unix
//                 socket $KVCOURSE_HOSTILE_TARGET
//   linger        starts a child in its own session, then in each later case says whether
//                 it is still alive
//   hog_children  three children that each allocate and touch 1.25 GiB (memory is the
//                 runner's as a whole, not per process)
//   fill_files    writes 16 MiB files, one after another, until something stops it
//   forge_results writes a forged document beside $KVCOURSE_HOSTILE_TARGET (the results
//                 file) and renames it over it, then plants folders at the names the
//                 grader's temporary file used to have (".results.json.<pid>.tmp")
//   setup_fails   answers a stage's setup request with an exception
//   setup_hangs   never answers a stage's setup request
//
// With $KVCOURSE_HOSTILE_SAY set, it also prints in every case which runner process
// answers it ("runner R as uid U": R drawn once per process, U its uid), before the
// attack: the tests of several runners at once tell them apart by it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using json = nlohmann::json;

// The course's bindings, declared by hand: a learner sees no grader header either.
namespace course {
const std::map<std::string, std::function<json(const json&)>>& adapter_table();
void run_setup(const json& setup);
}  // namespace course

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

const std::string g_mode = env("KVCOURSE_HOSTILE");
bool g_target = false;  // this request is the attacked case, 02-one-append
pid_t g_lingering = 0;  // mode linger: the child started in 02-one-append

bool read_exactly(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

void write_all(int fd, const std::string& bytes) {
  for (size_t at = 0; at < bytes.size();) {
    ssize_t w = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (w <= 0) return;
    at += size_t(w);
  }
}

std::string header(uint64_t length, uint64_t id) {
  std::string h;
  for (int i = 0; i < 4; ++i) h += char((length >> (8 * i)) & 0xff);
  for (int i = 0; i < 8; ++i) h += char((id >> (8 * i)) & 0xff);
  return h;
}

void send(uint64_t id, const std::string& payload) {
  write_all(4, header(payload.size(), id) + payload);
}

std::string slurp(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": " + std::strerror(errno);
    return "";
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json honest(const json& request) {
  return {{"status", "ok"},
          {"output", course::adapter_table().at(request.at("adapter"))(request.at("input"))}};
}

// Forges: the fixture's expected output, if the file can be read.
json steal(const json& request) {
  std::string error;
  const std::string fixtures = env("KVCOURSE_HOSTILE_FIXTURES");
  const std::string text =
      slurp(fixtures + "/cache-structure/" + request.value("case", "") + ".json", error);
  std::string reference_error, hidden_error;
  slurp(std::string(HOSTILE_COURSE_DIR) + "/reference/decode.cpp", reference_error);
  std::printf("reference/decode.cpp: %s\n",
              reference_error.empty() ? "READ" : reference_error.c_str());
  slurp(std::string(HOSTILE_COURSE_DIR) + "/fixtures-hidden/cache-structure/01-empty.json",
        hidden_error);
  std::printf("fixtures-hidden: %s\n", hidden_error.empty() ? "READ" : hidden_error.c_str());
  if (text.empty())
    return {{"status", "exception"}, {"type", "theft"}, {"what", "could not read " + error}};
  std::printf("fixture: READ\n");
  return {{"status", "ok"}, {"output", json::parse(text).at("expected")}};
}

// Waits in its own session for the grader to be done, then writes a full score over
// the results file.
void start_rewriter() {
  const std::string target = env("KVCOURSE_HOSTILE_TARGET");
  if (::fork() != 0) return;
  ::setsid();
  if (::fork() != 0) ::_exit(0);
  for (int i = 0; i < 500; ++i) {
    ::usleep(20000);
    std::string error;
    const std::string now = slurp(target, error);
    if (now.find("\"tests\"") != std::string::npos && now.find("forged") == std::string::npos &&
        now.find("did not finish") == std::string::npos) {
      std::ofstream(target) << "{\"score\": 1000, \"output\": \"forged\", \"tests\": []}\n";
      ::_exit(0);
    }
  }
  ::_exit(0);
}

void try_signals() {
  const pid_t parent = ::getppid();
  const int a = ::kill(parent, SIGSTOP), b = ::kill(parent, SIGKILL);
  std::printf("kill(parent %d): %s, %s\n", int(parent), a == 0 ? "sent" : std::strerror(errno),
              b == 0 ? "sent" : std::strerror(errno));
  // Every process it can see but itself; in the sandbox there is none it may signal.
  ::signal(SIGTERM, SIG_IGN);
  std::printf("kill(-1, SIGTERM): %s\n", ::kill(-1, SIGTERM) == 0 ? "sent" : std::strerror(errno));
}

void try_writes() {
  std::stringstream paths(env("KVCOURSE_HOSTILE_TARGET"));
  for (std::string path; std::getline(paths, path, ':');) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
      std::printf("write %s: %s\n", path.c_str(), std::strerror(errno));
      continue;
    }
    write_all(fd, "hostile was here\n");
    ::close(fd);
    std::printf("write %s: WRITTEN\n", path.c_str());
  }
}

void fork_bomb() {
  int children = 0;
  while (children < 100000) {
    const pid_t pid = ::fork();
    if (pid < 0) break;
    if (pid == 0) {
      ::setsid();  // out of the runner's process group: a group kill misses it
      while (true) ::pause();
    }
    ++children;
  }
  std::printf("forked %d children, then: %s\n", children, std::strerror(errno));
}

void allocate() {
  const size_t bytes = size_t(6) << 30;
  char* p = static_cast<char*>(std::malloc(bytes));
  if (!p) {
    std::printf("allocating 6 GB: refused\n");
    return;
  }
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  std::printf("allocating 6 GB: TOUCHED\n");
  std::free(p);
}

void hog_children() {
  int got = 0, started = 0;
  for (int i = 0; i < 3; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::printf("hog: fork: %s\n", std::strerror(errno));
      break;
    }
    if (pid == 0) {
      const size_t bytes = size_t(1280) << 20;
      char* p = static_cast<char*>(std::malloc(bytes));
      if (!p) ::_exit(1);
      for (size_t at = 0; at < bytes; at += 4096) p[at] = 1;
      ::_exit(0);
    }
    ++started;
  }
  for (int i = 0; i < started; ++i) {
    int status = 0;
    if (::wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++got;
  }
  std::printf("hog: %d of 3 children touched 1.25 GiB\n", got);
}

void fill_files() {
  ::signal(SIGXFSZ, SIG_IGN);
  const std::string block(1 << 20, 'x');
  size_t written = 0;
  for (int file = 0; file < 512; ++file) {
    const int fd = ::open(("hostile-fill-" + std::to_string(file)).c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) break;
    bool full = false;
    for (int mb = 0; mb < 16 && !full; ++mb) {
      const ssize_t w = ::write(fd, block.data(), block.size());
      full = w <= 0;
      if (w > 0) written += size_t(w);
    }
    ::close(fd);
    if (full) break;
  }
  std::printf("fill_files: stopped after %zu MiB: %s\n", written >> 20, std::strerror(errno));
}

void forge_results() {
  const std::string target = env("KVCOURSE_HOSTILE_TARGET");
  const std::string folder = target.substr(0, target.rfind('/'));
  const std::string forged = folder + "/forged.json";
  {
    std::ofstream out(forged);
    out << "{\"passed\": true, \"forged\": true, \"stages\": []}\n";
  }
  const int renamed = ::rename(forged.c_str(), target.c_str());
  std::printf("rename over the results: %s\n", renamed == 0 ? "RENAMED" : std::strerror(errno));
  int planted = 0;
  const int parent = int(::getppid());
  for (int pid = std::max(1, parent - 50); pid < parent + 50; ++pid)
    planted +=
        ::mkdir((folder + "/.results.json." + std::to_string(pid) + ".tmp").c_str(), 0777) == 0;
  std::printf("planted %d folders: %s\n", planted, planted ? "PLANTED" : std::strerror(errno));
}

void fill_disk() {
  ::signal(SIGXFSZ, SIG_IGN);  // see the error rather than die of it
  const int fd = ::open("hostile-fill", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::printf("fill: cannot create: %s\n", std::strerror(errno));
    return;
  }
  const std::string block(1 << 20, 'x');
  size_t written = 0;
  while (written < (size_t(8) << 30)) {
    ssize_t w = ::write(fd, block.data(), block.size());
    if (w <= 0) break;
    written += size_t(w);
  }
  std::printf("fill: stopped after %zu MiB: %s\n", written >> 20, std::strerror(errno));
  ::close(fd);
}

void try_network() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(uint16_t(std::atoi(env("KVCOURSE_HOSTILE_PORT").c_str())));
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int tcp = ::connect(s, reinterpret_cast<sockaddr*>(&in), sizeof in);
  std::printf("tcp 127.0.0.1: %s\n", tcp == 0 ? "CONNECTED" : std::strerror(errno));
  ::close(s);
  s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  const std::string name = env("KVCOURSE_HOSTILE_TARGET");
  std::memcpy(un.sun_path + 1, name.data(), std::min(name.size(), sizeof un.sun_path - 2));
  const int unix_rc = ::connect(s, reinterpret_cast<sockaddr*>(&un),
                                socklen_t(sizeof(sa_family_t) + 1 + name.size()));
  std::printf("abstract unix socket: %s\n", unix_rc == 0 ? "CONNECTED" : std::strerror(errno));
  ::close(s);
}

// The channel attacks; true when the answer was already sent.
bool attack_channel(uint64_t id, const json& request) {
  if (g_mode == "stray") send(id + 7, honest(request).dump());
  if (g_mode == "wrong_id") {
    send(id + 1, honest(request).dump());
    return true;
  }
  if (g_mode == "nested") {
    send(id, "{\"status\": \"ok\", \"output\": " + std::string(100000, '[') +
                 std::string(100000, ']') + "}");
    return true;
  }
  if (g_mode == "huge") {
    const uint64_t floats = 100000000;
    std::string body = "{\"status\": \"ok\", \"output\": {\"caches\": [{\"keys\": {\"data\": [";
    write_all(4, header(body.size() + floats * 4, id) + body);
    const std::string chunk = [] {
      std::string c;
      for (int i = 0; i < 16384; ++i) c += "0.5,";
      return c;
    }();
    for (uint64_t sent = 0; sent < floats; sent += 16384) write_all(4, chunk);
    return true;
  }
  if (g_mode == "sleep")
    while (true) ::pause();
  if (g_mode == "spin") {
    volatile unsigned long spins = 0;
    while (true) spins = spins + 1;
  }
  return false;
}

void linger() {
  if (g_target) {
    g_lingering = ::fork();
    if (g_lingering < 0) std::printf("linger: fork: %s\n", std::strerror(errno));
    if (g_lingering == 0) {
      ::setsid();
      while (true) ::pause();
    }
  } else if (g_lingering > 0) {
    const pid_t done = ::waitpid(g_lingering, nullptr, WNOHANG);
    std::printf("the child of 02-one-append: %s\n", done == 0 ? "ALIVE" : "gone");
  }
}

json answer(uint64_t id, const json& request, bool& sent) {
  sent = false;
  if (g_mode == "linger") linger();
  if (g_mode == "steal") return steal(request);
  if (g_mode == "setsid" && g_target) start_rewriter();
  if (g_mode == "signal" && g_target) try_signals();
  if (g_mode == "write" && g_target) try_writes();
  if (g_mode == "fork_bomb" && g_target) fork_bomb();
  if (g_mode == "alloc" && g_target) allocate();
  if (g_mode == "fill_disk" && g_target) fill_disk();
  if (g_mode == "hog_children" && g_target) hog_children();
  if (g_mode == "fill_files" && g_target) fill_files();
  if (g_mode == "forge_results" && g_target) forge_results();
  if (g_mode == "network" && g_target) try_network();
  if (g_mode == "escapes" && g_target)
    std::printf(
        "\033]0;pwned\007\033[2J\033[H\033[1;32m  PASS 02-one-append\033[0m\nAll 8 cases pass.\n");
  if (g_target && (sent = attack_channel(id, request))) return {};
  return honest(request);
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  char head[12];
  while (read_exactly(3, head, sizeof head)) {
    uint64_t length = 0, id = 0;
    for (int i = 3; i >= 0; --i) length = length << 8 | uint8_t(head[i]);
    for (int i = 11; i >= 4; --i) id = id << 8 | uint8_t(head[i]);
    std::string payload(length, '\0');
    if (!read_exactly(3, payload.data(), length)) return 3;
    const json request = json::parse(payload);
    json response = {{"status", "ok"}, {"output", json::object()}};
    bool sent = false;
    if (request.value("type", "") == "setup") {
      if (g_mode == "setup_hangs")
        while (true) ::pause();
      if (g_mode == "setup_fails")
        response = {{"status", "exception"},
                    {"type", "std::runtime_error"},
                    {"what", "the weights are broken"}};
      else
        course::run_setup(request.value("setup", json::object()));
    } else {
      g_target = request.value("case", "") == "02-one-append";
      if (!env("KVCOURSE_HOSTILE_SAY").empty()) {
        static const unsigned long self = std::random_device{}();
        std::printf("runner %lu as uid %d\n", self, int(::getuid()));
      }
      try {
        response = answer(id, request, sent);
      } catch (const std::exception& e) {
        response = {{"status", "exception"}, {"type", "std::exception"}, {"what", e.what()}};
      }
    }
    std::fflush(stdout);
    if (!sent) send(id, response.dump());
  }
  return 0;
}
