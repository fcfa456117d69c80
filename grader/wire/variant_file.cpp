#include "wire/variant_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace course {

bool is_variant_file(const fs::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".mistake" || ext == ".alternative";
}

VariantFile read_variant_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw VariantFileError(file.string() + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  auto fail = [&](const std::string& problem) {
    return VariantFileError(file.string() + ": " + problem);
  };

  VariantFile v;
  v.path = file;
  v.name = file.stem().string();
  v.mistake = file.extension() == ".mistake";
  std::string line, *target = nullptr;
  bool in_edits = false;
  for (std::istringstream lines(text.str()); std::getline(lines, line);) {
    if (line == "@@ find") {
      in_edits = true;
      v.edits.emplace_back();
      target = &v.edits.back().find;
    } else if (line == "@@ replace") {
      if (v.edits.empty()) throw fail("\"@@ replace\" before \"@@ find\"");
      target = &v.edits.back().replace;
    } else if (line == "@@ end") {
      target = nullptr;
    } else if (target) {
      *target += line + "\n";
    } else if (!in_edits && !line.empty() && line[0] != '#') {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t value = line.find_first_not_of(' ', colon + 1);
      v.header[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
    }
  }
  auto field = [&](const char* key) {
    auto it = v.header.find(key);
    return it == v.header.end() ? std::string() : it->second;
  };
  v.stage = field("stage");
  v.id = field("diagnosis");
  v.parameter = field("parameter");
  v.file = field("file");
  if (v.stage.empty()) throw fail("no \"stage:\" line");
  if (v.mistake && v.id.empty()) throw fail("no \"diagnosis:\" line");
  if (v.mistake) {
    v.title = field("title");
    v.explanation = field("explanation");
    v.lesson = field("lesson");
    for (const char* key : {"title", "explanation", "lesson"})
      if (field(key).empty()) throw fail(std::string("no \"") + key + ":\" line (the catalogue's text)");
    if (v.lesson.rfind("mistake-", 0) != 0)
      throw fail("\"lesson: " + v.lesson + "\" is not an anchor of a lesson's mistake section (mistake-...)");
    const std::string hint = field("hint");
    if (hint.empty() || hint.size() > 2 || hint.find_first_not_of("0123456789") != std::string::npos)
      throw fail("\"hint:\" must be the tier of the stage's hints that covers it (0: none), not \"" + hint + "\"");
    v.hint = std::stoi(hint);
  }
  if (v.file.empty()) throw fail("no \"file:\" line");
  if (v.edits.empty()) throw fail("no edits");
  return v;
}

std::vector<VariantFile> read_variant_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_variant_file(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<VariantFile> out;
  for (const fs::path& file : files) {
    VariantFile v = read_variant_file(file);
    for (const VariantFile& earlier : out)
      if (v.mistake && earlier.mistake && earlier.id == v.id && earlier.parameter == v.parameter)
        throw VariantFileError(file.string() + ": " + earlier.name + " already has diagnosis " +
                               v.id +
                               (v.parameter.empty() ? "" : " with parameter " + v.parameter));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace course
