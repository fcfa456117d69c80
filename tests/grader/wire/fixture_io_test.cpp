#include "wire/fixture.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <fstream>

#include "wire/digest.hpp"

#include "test_support.hpp"

using namespace course;
using testing_support::has;
using testing_support::TempDir;

namespace {

Fixture sample_fixture(size_t n_values = 4) {
  Fixture f;
  f.stage = "cache-structure";
  f.name = "sample";
  f.checks = "A sample.";
  f.adapter = "run_cache_plan";
  Tensor t;
  t.shape = {int64_t(n_values)};
  for (size_t i = 0; i < n_values; ++i) t.data.push_back(0.1f * float(i) + 1e-7f);
  f.input = {{"x", tensor_to_json(t, TensorEncoding::base64)}};
  f.expected = {{"rows", {{12, 1, 64}}}, {"t", tensor_to_json(t, TensorEncoding::numbers)}};
  return f;
}

// The error message of loading `file`, or "" when it loads.
std::string load_error(const std::filesystem::path& file) {
  try {
    load_fixture(file);
  } catch (const FixtureError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::filesystem::path& file, const std::string& words) {
  std::string message = load_error(file);
  EXPECT_NE(message.find(file.string()), std::string::npos) << "names the file: " << message;
  EXPECT_NE(message.find(words), std::string::npos) << message;
}

}  // namespace

TEST(fixture_io, round_trips_json_and_gzip) {
  TempDir dir;
  for (size_t n : {size_t(4), size_t(100000)}) {  // the second is large enough to be gzipped
    Fixture f = sample_fixture(n);
    auto path = write_fixture(dir.path(), f);
    EXPECT_EQ(path.extension() == ".gz", n > 4);
    Fixture back = load_fixture(path);
    EXPECT_EQ(back.name, f.name);
    EXPECT_EQ(back.checks, f.checks);
    EXPECT_EQ(tensor_from_json(back.input["x"]).data, tensor_from_json(f.input["x"]).data);
    EXPECT_EQ(tensor_from_json(back.expected["t"]).data, tensor_from_json(f.expected["t"]).data);
    EXPECT_EQ(back.expected["rows"], f.expected["rows"]);
  }
}

TEST(fixture_io, writing_twice_gives_identical_bytes) {
  TempDir a, b;
  auto pa = write_fixture(a.path(), sample_fixture(100000));
  auto pb = write_fixture(b.path(), sample_fixture(100000));
  EXPECT_EQ(testing_support::read_file(pa), testing_support::read_file(pb));
}

TEST(fixture_io, rejects_missing_file) { expect_error("/nonexistent/kvcourse/x.json", "no such file"); }

TEST(fixture_io, rejects_truncated_gzip) {
  TempDir dir;
  auto path = write_fixture(dir.path(), sample_fixture(100000));
  std::string bytes = testing_support::read_file(path);
  testing_support::write_file(path, bytes.substr(0, bytes.size() / 2));
  expect_error(path, "truncated");
}

TEST(fixture_io, rejects_gz_name_without_gzip_data) {
  TempDir dir;
  auto path = dir / "plain.json.gz";
  testing_support::write_file(path, "{}");
  expect_error(path, "not gzip");
}

TEST(fixture_io, rejects_corrupt_gzip) {
  TempDir dir;
  auto path = write_fixture(dir.path(), sample_fixture(100000));
  std::string bytes = testing_support::read_file(path);
  for (size_t i = 20; i < 60; ++i) bytes[i] = char(bytes[i] ^ 0x5a);
  testing_support::write_file(path, bytes);
  expect_error(path, "gzip");
}

TEST(fixture_io, rejects_invalid_json) {
  TempDir dir;
  auto path = dir / "bad.json";
  testing_support::write_file(path, "{\"format\": ");
  expect_error(path, "not valid JSON");
}

TEST(fixture_io, rejects_other_format_version_and_says_how_to_regenerate) {
  TempDir dir;
  json j = fixture_to_json(sample_fixture());
  j["format_version"] = 99;
  auto path = dir / "v99.json";
  testing_support::write_file(path, j.dump());
  expect_error(path, "format_version 99");
  expect_error(path, "--target fixtures");
}

TEST(fixture_io, rejects_shape_that_disagrees_with_data) {
  TempDir dir;
  json j = fixture_to_json(sample_fixture());
  j["expected"]["t"]["shape"] = {5};
  auto path = dir / "shape.json";
  testing_support::write_file(path, j.dump());
  expect_error(path, "expected.t: tensor shape [5] holds 5 values but its data has 4");
}

TEST(fixture_io, rejects_missing_fields) {
  TempDir dir;
  for (const char* key : {"format", "format_version", "stage", "case", "checks", "adapter", "input", "expected"}) {
    json j = fixture_to_json(sample_fixture());
    j.erase(key);
    auto path = dir / (std::string("no-") + key + ".json");
    testing_support::write_file(path, j.dump());
    EXPECT_NE(load_error(path), "") << key;
  }
}

TEST(fixture_io, lists_fixtures_in_name_order) {
  TempDir dir;
  for (const char* name : {"b", "a", "c"}) {
    Fixture f = sample_fixture();
    f.name = name;
    write_fixture(dir.path(), f);
  }
  testing_support::write_file(dir / "notes.txt", "not a fixture");
  auto files = list_fixtures(dir.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "a.json");
  EXPECT_EQ(files[2].filename(), "c.json");
  EXPECT_THROW(list_fixtures(dir / "missing"), FixtureError);
}

namespace {

// The sample fixture's text with `field` set to `value_text` (any JSON text, even invalid).
std::string fixture_text_with(const std::string& field, const std::string& value_text) {
  json j = fixture_to_json(sample_fixture());
  j[field] = "@@";
  std::string text = j.dump();
  return text.replace(text.find("\"@@\""), 4, value_text);
}

// The error of loading `text` as dir/name.
std::string text_error(const TempDir& dir, const std::string& name, const std::string& text) {
  testing_support::write_file(dir / name, text);
  return load_error(dir / name);
}

}  // namespace

TEST(fixture_io, a_fixture_nested_100000_deep_is_refused_without_a_crash) {
  TempDir dir;
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string message = text_error(dir, "deep.json", fixture_text_with("expected", deep));
  EXPECT_TRUE(has(message, (dir / "deep.json").string() + ": is nested deeper than 64 levels")) << message;
  // Just at the limit is fine: the fixture's own object is the first level.
  std::string at_limit = std::string(63, '[') + std::string(63, ']');
  EXPECT_EQ(text_error(dir, "ok.json", fixture_text_with("extra", at_limit)), "");
  EXPECT_NE(text_error(dir, "over.json", fixture_text_with("extra", "[" + at_limit + "]")), "");
}

TEST(fixture_io, a_gzip_bomb_is_a_named_error_not_bad_alloc) {
  TempDir dir;
  const auto path = dir / "bomb.json.gz";
  gzFile out = gzopen(path.c_str(), "wb9");
  ASSERT_NE(out, nullptr);
  const std::string zeros(1 << 20, ' ');
  for (size_t mb = 0; mb <= (kMaxFixtureBytes >> 20); ++mb)
    ASSERT_EQ(gzwrite(out, zeros.data(), unsigned(zeros.size())), int(zeros.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  EXPECT_LT(std::filesystem::file_size(path), 1u << 20) << "a bomb: small on disk";
  expect_error(path, "inflates to more than 67108864 bytes");
}

TEST(fixture_io, a_number_beyond_double_names_the_file) {
  TempDir dir;
  std::string message = text_error(dir, "big.json", fixture_text_with("extra", "1e400"));
  EXPECT_TRUE(has(message, (dir / "big.json").string() + ": holds a number too large for a double")) << message;
  EXPECT_FALSE(has(message, "[json.exception")) << message;
  // Inside a tensor, a double that float32 cannot hold.
  json j = fixture_to_json(sample_fixture());
  j["expected"]["t"]["data"][1] = 1e300;
  EXPECT_TRUE(has(text_error(dir, "f.json", j.dump()), "expected.t: tensor data[1] is 1e+300, outside float32's range"));
}

TEST(fixture_io, wrong_typed_fields_are_named) {
  TempDir dir;
  EXPECT_TRUE(has(text_error(dir, "a.json", fixture_text_with("stage", "5")), "\"stage\" must be a string, not 5"));
  EXPECT_TRUE(has(text_error(dir, "b.json", fixture_text_with("format", "7")), "is not a course fixture"));
  EXPECT_TRUE(has(text_error(dir, "c.json", fixture_text_with("format_version", "\"1\"")),
                  "has no integer \"format_version\" (it is \"1\")"));
  EXPECT_TRUE(has(text_error(dir, "d.json", fixture_text_with("adapter", "[]")), "\"adapter\" must be a string"));
  for (const char* name : {"a.json", "b.json", "c.json", "d.json"})
    EXPECT_FALSE(has(load_error(dir / name), "[json.exception")) << load_error(dir / name);
}

TEST(fixture_io, format_version_is_compared_whole) {
  TempDir dir;
  for (const char* version : {"4294967297", "18446744073709551617", "-4294967295", "1.0"}) {
    std::string message = text_error(dir, "v.json", fixture_text_with("format_version", version));
    EXPECT_NE(message, "") << version << " was read as 1";
  }
  EXPECT_TRUE(has(text_error(dir, "v.json", fixture_text_with("format_version", "4294967297")),
                  "has format_version 4294967297 but this grader reads version 1"));
}

TEST(fixture_io, an_element_count_that_overflows_is_refused) {
  TempDir dir;
  json j = fixture_to_json(sample_fixture());
  j["input"]["x"] = {{"shape", {uint64_t(1) << 32, uint64_t(1) << 32}}, {"dtype", "float32"}, {"data", json::array()}};
  EXPECT_TRUE(has(text_error(dir, "n.json", j.dump()), "input.x: tensor shape [4294967296, 4294967296] holds more than"));
}

TEST(fixture_io, a_malformed_digest_is_refused_at_load) {
  TempDir dir;
  Tensor t;
  t.shape = {2, 4};
  t.data = {1, 2, 3, 4, 5, 6, 7, 8};
  json j = fixture_to_json(sample_fixture());
  j["expected"]["d"] = make_digest(t, {0, 3}, true);
  EXPECT_EQ(text_error(dir, "ok.json", j.dump()), "");
  j["expected"]["d"]["sample_index"] = {0, 4};
  EXPECT_TRUE(has(text_error(dir, "i.json", j.dump()), "expected.d: digest tensor: \"sample_index\"[1] is 4"));
  j["expected"]["d"] = make_digest(t, {0, 3}, true);
  j["expected"]["d"]["samples"][0][1] = "x";
  EXPECT_TRUE(has(text_error(dir, "s.json", j.dump()), "\"samples\"[0][1] is not a float32 value"));
  j["expected"]["d"] = make_digest(t, {0, 3}, true);
  j["expected"]["d"]["shape"] = {3, 4};
  EXPECT_TRUE(has(text_error(dir, "r.json", j.dump()), "has 3 rows but \"rows\" lists 2"));
}

TEST(fixture_io, non_regular_files_named_json_are_reported_and_never_block) {
  TempDir dir;
  write_fixture(dir.path(), sample_fixture());
  std::filesystem::create_directory(dir / "folder.json");
  try {
    list_fixtures(dir.path());
    ADD_FAILURE() << "a directory named *.json was skipped";
  } catch (const FixtureError& e) {
    EXPECT_TRUE(has(e.what(), (dir / "folder.json").string() + ": is a directory, not a fixture file")) << e.what();
  }
  std::filesystem::remove(dir / "folder.json");
  ASSERT_EQ(::mkfifo((dir / "pipe.json").c_str(), 0600), 0);
  try {
    list_fixtures(dir.path());
    ADD_FAILURE() << "a FIFO named *.json was skipped";
  } catch (const FixtureError& e) {
    EXPECT_TRUE(has(e.what(), "pipe.json: is a FIFO (named pipe), not a fixture file")) << e.what();
  }
  // Opening it directly returns at once (no writer is waited for), with the reason.
  expect_error(dir / "pipe.json", "is a FIFO (named pipe), not a regular file");
  ASSERT_EQ(::mkfifo((dir / "pipe.json.gz").c_str(), 0600), 0);
  expect_error(dir / "pipe.json.gz", "is a FIFO (named pipe), not a regular file");
  std::filesystem::create_symlink(dir / "gone.json", dir / "link.json");
  std::filesystem::remove(dir / "pipe.json");
  std::filesystem::remove(dir / "pipe.json.gz");
  try {
    list_fixtures(dir.path());
    ADD_FAILURE() << "a broken link named *.json was skipped";
  } catch (const FixtureError& e) {
    EXPECT_TRUE(has(e.what(), "link.json: is a broken symbolic link")) << e.what();
  }
}

TEST(fixture_io, an_oversized_plain_file_is_refused_before_reading) {
  TempDir dir;
  const auto path = dir / "huge.json";
  { std::ofstream out(path); }
  std::filesystem::resize_file(path, kMaxFixtureBytes + 1);  // sparse: no disk used
  expect_error(path, "is 67108865 bytes, over the limit of 67108864");
}
