#include "wire/fixture.hpp"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace course {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& file, const std::string& problem) {
  throw FixtureError(file.string() + ": " + problem);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* kRegenerate = " (fixtures are generated: run `cmake --build build --target fixtures`)";

// Indented JSON in which an array of plain values stays on one line, so a fixture reads
// as a document rather than as one number per line.
void pretty(const json& j, int indent, std::string& out) {
  auto is_flat = [](const json& a) {
    return std::all_of(a.begin(), a.end(), [](const json& x) { return x.is_primitive(); });
  };
  const std::string pad(size_t(indent + 1), ' ');
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
      out += pad + json(it.key()).dump() + ": ";
      pretty(it.value(), indent + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += std::string(size_t(indent), ' ') + "}";
  } else if (j.is_array() && !j.empty() && !is_flat(j)) {
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      out += pad;
      pretty(j[i], indent + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += std::string(size_t(indent), ' ') + "]";
  } else {
    out += j.dump();
  }
}

std::vector<MistakeRecord> mistake_records(const fs::path& file, const json& list) {
  if (!list.is_array()) fail(file, "\"mistakes\" is not a list");
  std::vector<MistakeRecord> out;
  for (const json& m : list) {
    auto text = [&](const char* key, bool required) {
      if (!m.is_object() || (m.contains(key) ? !m[key].is_string() : required))
        fail(file, std::string("a \"mistakes\" entry has no string \"") + key + "\"");
      return m.is_object() && m.contains(key) ? m[key].get<std::string>() : std::string();
    };
    MistakeRecord r{text("id", true), text("parameter", false), text("output", true)};
    const bool hex = r.output.size() == 16 &&
                     r.output.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex && r.output != kMistakePasses)
      fail(file, "mistake " + r.id + ": \"output\" is neither \"passes\" nor a 16-digit digest");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string read_maybe_gzip(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, fs::exists(file) ? "cannot be read" : "no such file");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string raw = buf.str();
  if (!ends_with(file.string(), ".gz")) return raw;

  if (raw.size() < 2 || uint8_t(raw[0]) != 0x1f || uint8_t(raw[1]) != 0x8b)
    fail(file, "is not gzip data (the name ends in .gz but the gzip magic bytes are missing)");
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(file, "zlib could not start inflating");
  zs.next_in = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string why = rc == Z_BUF_ERROR ? "is truncated (the gzip stream ends early)"
                                          : std::string("is corrupt gzip data (") + (zs.msg ? zs.msg : "inflate failed") + ")";
      inflateEnd(&zs);
      fail(file, why);
    }
    out.append(chunk, sizeof chunk - zs.avail_out);
    if (rc != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      fail(file, "is truncated (the gzip stream ends early)");
    }
  }
  inflateEnd(&zs);
  return out;
}

Fixture load_fixture(const fs::path& file) {
  std::string text = read_maybe_gzip(file);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(file, std::string("is not valid JSON (") + e.what() + ")" + kRegenerate);
  }
  if (!j.is_object()) fail(file, "is not a JSON object");
  if (j.value("format", "") != kFixtureFormat)
    fail(file, std::string("is not a course fixture (\"format\" is not \"") + kFixtureFormat + "\")");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer())
    fail(file, "has no integer \"format_version\"");
  int version = j["format_version"].get<int>();
  if (version != kFixtureFormatVersion)
    fail(file, "has format_version " + std::to_string(version) + " but this grader reads version " +
                   std::to_string(kFixtureFormatVersion) + kRegenerate);
  Fixture f;
  f.file = file;
  for (const char* key : {"stage", "case", "checks", "adapter"}) {
    if (!j.contains(key) || !j[key].is_string()) fail(file, std::string("has no string \"") + key + "\"");
  }
  for (const char* key : {"input", "expected"}) {
    if (!j.contains(key)) fail(file, std::string("has no \"") + key + "\"");
  }
  f.stage = j["stage"].get<std::string>();
  f.name = j["case"].get<std::string>();
  f.checks = j["checks"].get<std::string>();
  f.adapter = j["adapter"].get<std::string>();
  f.input = std::move(j["input"]);
  f.expected = std::move(j["expected"]);
  auto check_tensors = [&](const json& part, const std::string& where) {
    for_each_tensor(part, where, [&](const std::string& path, const json& t) {
      try {
        (void)tensor_from_json(t);
      } catch (const TensorError& e) {
        fail(file, path + ": " + e.what());
      }
    });
  };
  check_tensors(f.input, "input");
  check_tensors(f.expected, "expected");
  if (j.contains("mistakes")) f.mistakes = mistake_records(file, j["mistakes"]);
  return f;
}

std::vector<fs::path> list_fixtures(const fs::path& stage_dir) {
  std::error_code ec;
  if (!fs::is_directory(stage_dir, ec)) throw FixtureError(stage_dir.string() + ": no such fixture folder");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(stage_dir)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (ends_with(name, ".json") || ends_with(name, ".json.gz")))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw FixtureError(stage_dir.string() + ": holds no fixture" + kRegenerate);
  return files;
}

json fixture_to_json(const Fixture& f) {
  json j;
  j["format"] = kFixtureFormat;
  j["format_version"] = kFixtureFormatVersion;
  j["stage"] = f.stage;
  j["case"] = f.name;
  j["checks"] = f.checks;
  j["adapter"] = f.adapter;
  j["input"] = f.input;
  j["expected"] = f.expected;
  reencode_tensors(j["input"], TensorEncoding::numbers);
  reencode_tensors(j["expected"], TensorEncoding::numbers);
  if (!f.mistakes.empty()) {
    json list = json::array();
    for (const MistakeRecord& m : f.mistakes) {
      json r = {{"id", m.id}, {"output", m.output}};
      if (!m.parameter.empty()) r["parameter"] = m.parameter;
      list.push_back(std::move(r));
    }
    j["mistakes"] = std::move(list);
  }
  return j;
}

fs::path write_fixture(const fs::path& dir, const Fixture& fixture, size_t gzip_above) {
  fs::create_directories(dir);
  std::string text;
  pretty(fixture_to_json(fixture), 0, text);
  text += "\n";
  bool gz = text.size() > gzip_above;
  fs::path path = dir / (fixture.name + (gz ? ".json.gz" : ".json"));
  fs::remove(dir / (fixture.name + (gz ? ".json" : ".json.gz")));
  if (!gz) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw FixtureError(path.string() + ": cannot be written");
    return path;
  }
  gzFile out = gzopen(path.c_str(), "wb9");
  if (!out) throw FixtureError(path.string() + ": cannot be written");
  int written = gzwrite(out, text.data(), static_cast<unsigned>(text.size()));
  if (gzclose(out) != Z_OK || written != int(text.size()))
    throw FixtureError(path.string() + ": writing gzip failed");
  return path;
}

}  // namespace course
