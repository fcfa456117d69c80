#include "cli/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "judge/stages.hpp"
#include "wire/tensor.hpp"

namespace course {

std::filesystem::path Progress::default_file() {
  if (const char* env = std::getenv("KVCOURSE_PROGRESS"); env && *env) return env;
  return course_root() / ".grader" / "progress.json";
}

Progress Progress::load(const std::filesystem::path& file) {
  Progress p;
  std::ifstream in(file);
  if (!in) return p;
  try {
    json j = json::parse(in);
    for (auto it = j.at("stages").begin(); it != j.at("stages").end(); ++it)
      if (it.value().is_string()) p.status[it.key()] = it.value().get<std::string>();
  } catch (const std::exception&) {
    return Progress{};  // a damaged file only forgets progress
  }
  return p;
}

void Progress::save(const std::filesystem::path& file) const {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  json j = {{"stages", status}};
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << j.dump(2) << "\n";
  }
  std::filesystem::rename(tmp, file, ec);
}

std::string Progress::state(const std::string& slug) const {
  auto it = status.find(slug);
  return it == status.end() ? "not run" : it->second;
}

const Stage* Progress::first_unpassed() const {
  for (const Stage& s : stage_table())
    if (state(s.slug) != "passed") return &s;
  return nullptr;
}

void print_stage_list(std::ostream& out, const Progress& progress) {
  const Stage* next = progress.first_unpassed();
  for (const Stage& s : stage_table()) {
    std::string state = progress.state(s.slug);
    char line[160];
    std::snprintf(line, sizeof line, "%d  %-20s %-28s %s", s.number, s.slug.c_str(),
                  s.title.c_str(), state.c_str());
    out << line << (&s == next ? "   <- next" : "") << "\n";
  }
}

}  // namespace course
