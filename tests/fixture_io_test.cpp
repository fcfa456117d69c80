#include "wire/fixture.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace course;
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
