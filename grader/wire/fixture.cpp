#include "wire/fixture.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "wire/digest.hpp"
#include "wire/json_bounded.hpp"

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

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a file of another kind";
}

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

std::string read_regular_file(const fs::path& file, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    fail(file, err == ENOENT ? "no such file" : std::string("cannot be read (") + std::strerror(err) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) fail(file, std::string("cannot be read (") + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) fail(file, "is " + file_kind(st.st_mode) + ", not a regular file");
  if (uint64_t(st.st_size) > max_bytes)
    fail(file, "is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(max_bytes));
  std::string out(size_t(st.st_size), '\0');
  size_t got = 0;
  while (true) {
    if (got == out.size()) {
      if (out.size() > max_bytes) fail(file, "grew past the limit of " + std::to_string(max_bytes) + " bytes while being read");
      out.resize(out.size() + 4096);  // the file grew since fstat: read on, up to the limit
    }
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(file, std::string("cannot be read (") + std::strerror(errno) + ")");
    if (n == 0) break;
    got += size_t(n);
  }
  out.resize(got);
  if (got > max_bytes) fail(file, "grew past the limit of " + std::to_string(max_bytes) + " bytes while being read");
  return out;
}

std::string gunzip(const std::string& raw, const fs::path& file, size_t max_bytes) {
  if (raw.size() < 2 || uint8_t(raw[0]) != 0x1f || uint8_t(raw[1]) != 0x8b)
    fail(file, "is not gzip data (the name ends in .gz but the gzip magic bytes are missing)");
  if (raw.size() > std::numeric_limits<uInt>::max()) fail(file, "is too large to inflate");
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(file, "zlib could not start inflating");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  std::string out;
  // The trailer's last four bytes say the inflated size (modulo 2^32): room for it at
  // once, within the limit; a wrong figure only costs a reallocation.
  if (raw.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(raw.data() + raw.size() - 4);
    const size_t isize = size_t(t[0]) | size_t(t[1]) << 8 | size_t(t[2]) << 16 | size_t(t[3]) << 24;
    out.reserve(std::min(isize, max_bytes));
  }
  char chunk[1 << 16];
  int rc = Z_OK;
  std::string why;
  while (rc != Z_STREAM_END && why.empty()) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      why = rc == Z_BUF_ERROR ? "is truncated (the gzip stream ends early)"
                              : std::string("is corrupt gzip data (") + (zs.msg ? zs.msg : "inflate failed") + ")";
    } else if (out.size() + (sizeof chunk - zs.avail_out) > max_bytes) {
      why = "inflates to more than " + std::to_string(max_bytes) +
            " bytes, the limit for a fixture (a damaged file or a gzip bomb)";
    } else {
      out.append(chunk, sizeof chunk - zs.avail_out);
      if (rc != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out != 0) why = "is truncated (the gzip stream ends early)";
    }
  }
  inflateEnd(&zs);
  if (!why.empty()) fail(file, why);
  return out;
}

std::string read_maybe_gzip(const fs::path& file) {
  std::string raw = read_regular_file(file, kMaxFixtureBytes);
  if (!ends_with(file.string(), ".gz")) return raw;
  return gunzip(raw, file, kMaxFixtureBytes);
}

namespace {

const json& string_field(const json& j, const fs::path& file, const char* key) {
  if (!j.contains(key)) fail(file, std::string("has no string \"") + key + "\"");
  if (!j[key].is_string()) fail(file, std::string("\"") + key + "\" must be a string, not " + json_excerpt(j[key], 40));
  return j[key];
}

void check_header(const json& j, const fs::path& file) {
  if (!j.is_object()) fail(file, "is not a JSON object");
  if (!j.contains("format") || j["format"] != kFixtureFormat)
    fail(file, std::string("is not a course fixture (\"format\" is not \"") + kFixtureFormat + "\")");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer())
    fail(file, "has no integer \"format_version\"" +
                   (j.contains("format_version") ? " (it is " + json_excerpt(j["format_version"], 40) + ")" : ""));
  // Compared as JSON numbers: 4294967297 is not 1, whatever an int would make of it.
  if (j["format_version"] != kFixtureFormatVersion)
    fail(file, "has format_version " + j["format_version"].dump() + " but this grader reads version " +
                   std::to_string(kFixtureFormatVersion) + kRegenerate);
}

// Every tensor and digest tensor inside `part` must be well formed.
void check_tensors(const json& part, const std::string& where, const fs::path& file) {
  for_each_matching(
      part, where, [](const json& v) { return is_digest(v) || is_tensor(v); },
      [&](const std::string& path, const json& v) {
        try {
          if (is_digest(v))
            (void)digest_from_json(v);
          else
            (void)tensor_from_json(v);
        } catch (const TensorError& e) {
          fail(file, path + ": " + e.what());
        }
      });
}

}  // namespace

Fixture parse_fixture(const std::string& text, const fs::path& file) {
  json j;
  try {
    j = parse_json_bounded(text, JsonLimits{kMaxJsonDepth, kMaxFixtureBytes}, file.string());
  } catch (const JsonInputError& e) {
    throw FixtureError(e.what() + std::string(kRegenerate));
  }
  check_header(j, file);
  Fixture f;
  f.file = file;
  f.stage = string_field(j, file, "stage").get<std::string>();
  f.name = string_field(j, file, "case").get<std::string>();
  f.checks = string_field(j, file, "checks").get<std::string>();
  f.adapter = string_field(j, file, "adapter").get<std::string>();
  for (const char* key : {"input", "expected"}) {
    if (!j.contains(key)) fail(file, std::string("has no \"") + key + "\"");
  }
  f.input = std::move(j["input"]);
  f.expected = std::move(j["expected"]);
  check_tensors(f.input, "input", file);
  check_tensors(f.expected, "expected", file);
  if (j.contains("mistakes")) f.mistakes = mistake_records(file, j["mistakes"]);
  if (j.contains("reference_work")) {
    const json& w = j["reference_work"];
    if (!w.is_object() || !w.contains("model_rows") || !w["model_rows"].is_number_unsigned() ||
        w["model_rows"].get<uint64_t>() > (uint64_t(1) << 40))
      fail(file, "\"reference_work\" must be {\"model_rows\": N} with N a whole number of rows");
    f.model_rows = w["model_rows"].get<int64_t>();
  }
  return f;
}

Fixture load_fixture(const fs::path& file) { return parse_fixture(read_maybe_gzip(file), file); }

std::string expected_error_type(const Fixture& fixture) {
  const json& e = fixture.expected;
  if (e.is_object() && e.size() == 1 && e.contains("error") && e["error"].is_string()) return e["error"].get<std::string>();
  return "";
}

std::vector<fs::path> list_fixtures(const fs::path& stage_dir) {
  std::error_code ec;
  if (!fs::is_directory(stage_dir, ec)) throw FixtureError(stage_dir.string() + ": no such fixture folder");
  std::vector<fs::path> files;
  fs::directory_iterator it(stage_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (!ends_with(name, ".json") && !ends_with(name, ".json.gz")) continue;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      fail(path, errno == ENOENT ? "is a broken symbolic link, not a fixture file"
                                 : std::string("cannot be read (") + std::strerror(errno) + ")");
    if (!S_ISREG(st.st_mode))
      fail(path, "is " + file_kind(st.st_mode) + ", not a fixture file (every name ending .json or .json.gz in a stage folder must be one)");
    files.push_back(path);
  }
  if (ec) throw FixtureError(stage_dir.string() + ": cannot be listed (" + ec.message() + ")");
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
  if (f.model_rows >= 0) j["reference_work"] = {{"model_rows", f.model_rows}};
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
  // Compressed or not by the reference's part alone, so that the file's name does not
  // depend on whether the mistakes' records were made (make-fixtures --mistakes).
  size_t reference_part = text.size();
  if (!fixture.mistakes.empty()) {
    Fixture bare = fixture;
    bare.mistakes.clear();
    std::string bare_text;
    pretty(fixture_to_json(bare), 0, bare_text);
    reference_part = bare_text.size() + 1;
  }
  const bool gz = reference_part > gzip_above;
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
