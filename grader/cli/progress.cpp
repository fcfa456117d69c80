#include "cli/progress.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "judge/stages.hpp"
#include "wire/fixture.hpp"
#include "wire/json_bounded.hpp"

namespace course {

namespace {

constexpr size_t kMaxProgressBytes = 1 << 20;  // a few hundred bytes in use

}  // namespace

std::filesystem::path Progress::default_file() {
  if (const char* env = std::getenv("KVCOURSE_PROGRESS"); env && *env) return env;
  return course_root() / ".grader" / "progress.json";
}

Progress Progress::load(const std::filesystem::path& file) {
  Progress p;
  try {
    json j = parse_json_bounded(read_regular_file(file, kMaxProgressBytes), JsonLimits{}, file.string());
    for (auto it = j.at("stages").begin(); it != j.at("stages").end(); ++it)
      if (it.value().is_string()) p.status[it.key()] = it.value().get<std::string>();
    if (j.contains("hints") && j["hints"].is_object())
      for (auto it = j["hints"].begin(); it != j["hints"].end(); ++it)
        if (it.value().is_number_integer() && it.value().get<long long>() > 0)
          p.hints_opened[it.key()] = int(std::min<long long>(it.value().get<long long>(), 1000));
    if (j.contains("speed") && j["speed"].is_object())
      for (auto it = j["speed"].begin(); it != j["speed"].end(); ++it) {
        const json& v = it.value();
        if (v.is_object() && v.contains("tokens_per_s") && v["tokens_per_s"].is_number() &&
            v.contains("ratio") && v["ratio"].is_number())
          p.speed[it.key()] = {v["tokens_per_s"].get<double>(), v["ratio"].get<double>()};
      }
  } catch (const std::exception&) {
    return Progress{};  // a damaged file only forgets progress
  }
  return p;
}

namespace {

// One line on stderr, the first time only: a grader that cannot remember progress still
// grades, and says so once rather than after every stage or every save in watch mode.
void warn_once(const std::filesystem::path& file, const std::string& why) {
  static bool warned = false;
  if (warned) return;
  warned = true;
  std::fprintf(stderr, "grader: warning: cannot write the progress file %s (%s); grading goes on, but "
               "progress is not remembered\n", file.c_str(), why.c_str());
}

// Writes `text` to a new regular file at `path`. Opened without blocking: a FIFO left
// at that name fails at once (ENXIO) instead of waiting for a reader.
bool write_new_file(const std::filesystem::path& path, const std::string& text, std::string& why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!ok) why = "not a regular file";
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = std::strerror(errno);
      ok = false;
    } else {
      done += size_t(n);
    }
  }
  if (::close(fd) != 0 && ok) {
    why = std::strerror(errno);
    ok = false;
  }
  return ok;
}

}  // namespace

bool Progress::save(const std::filesystem::path& file) const {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  json j = {{"stages", status}};
  if (!hints_opened.empty()) j["hints"] = hints_opened;
  for (const auto& [slug, sp] : speed)
    j["speed"][slug] = {{"tokens_per_s", sp.tokens_per_s}, {"ratio", sp.ratio}};
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  std::string why;
  if (!write_new_file(tmp, j.dump(2) + "\n", why)) {
    std::filesystem::remove(tmp, ec);
    warn_once(file, why);
    return false;
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    warn_once(file, ec.message());
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

std::string Progress::state(const std::string& slug) const {
  auto it = status.find(slug);
  return it == status.end() ? "not run" : it->second;
}

int Progress::hints(const Stage& stage) const {
  auto it = hints_opened.find(stage.slug);
  if (it == hints_opened.end()) return 0;
  return std::clamp(it->second, 0, int(stage.hints.size()));
}

const Stage* Progress::first_unpassed() const {
  for (const Stage& s : stage_table())
    if (state(s.slug) != "passed") return &s;
  return nullptr;
}

void Progress::record(const std::string& slug, bool passed, double tokens_per_s, double ratio) {
  status[slug] = passed ? "passed" : "failing";
  if (tokens_per_s > 0) speed[slug] = {tokens_per_s, ratio};
}

void print_stage_list(std::ostream& out, const Progress& progress) {
  const Stage* next = progress.first_unpassed();
  for (const Stage& s : stage_table()) {
    std::string state = progress.state(s.slug);
    const int opened = progress.hints(s);
    if (opened > 0) state.resize(std::max<size_t>(state.size(), 8), ' ');  // "hints" in one column
    char line[160];
    std::snprintf(line, sizeof line, "%2d  %-20s %-28s %s", s.number, s.slug.c_str(),
                  s.title.c_str(), state.c_str());
    out << line;
    if (opened > 0)
      out << " hints " << opened << "/" << s.hints.size();
    if (auto it = progress.speed.find(s.slug); it != progress.speed.end()) {
      char speed[96];
      std::snprintf(speed, sizeof speed, "  %.1f tokens per CPU-second, %.2f of the model's loop",
                    it->second.tokens_per_s, it->second.ratio);
      out << speed;
    }
    out << (&s == next ? "   <- next" : "") << "\n";
  }
}

}  // namespace course
