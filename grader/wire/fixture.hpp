// Fixture files: fixtures/<stage>/<case>.json, or .json.gz (zlib's gzip) when large.
//
//   {"format": "kvcourse-fixture", "format_version": 1,
//    "stage": "cache-structure", "case": "three-appends",
//    "checks": "One sentence on what this case proves.",
//    "adapter": "run_cache_plan",
//    "input": {...},       what the runner hands the adapter
//    "expected": {...},    what the reference returned (tensors as in tensor.hpp)
//    "mistakes": [...],    optional: what each catalogued mistake returns (MistakeRecord)
//    "reference_work": {"model_rows": N}}   optional: what the case cost the reference
//                          when the fixture was written (Fixture::model_rows)
//
// Fixtures are written by the generator (target `fixtures`), never by hand.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "wire/tensor.hpp"

namespace course {

inline constexpr int kFixtureFormatVersion = 1;
inline constexpr const char* kFixtureFormat = "kvcourse-fixture";

// The most bytes of JSON one fixture may hold, as a file or once inflated (64 MiB; the
// largest committed fixture inflates to 0.5 MB). A gzip stream that inflates to more is
// refused as it inflates ("a gzip bomb"), before the memory is taken.
inline constexpr size_t kMaxFixtureBytes = size_t(64) << 20;

struct FixtureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one catalogued mistake (stages/*/mistakes/*.mistake, run by the generator) returns for a
// case: "passes" when its output passes the case, else the digest of its whole output
// (output_digest in digest.hpp, 16 hex digits).
//   {"id": "dec.wrong_scale", "parameter": "1/sqrt(768)", "output": "3f9c0a..."}
struct MistakeRecord {
  std::string id;
  std::string parameter;  // may be empty
  std::string output;
};
inline constexpr const char* kMistakePasses = "passes";

struct Fixture {
  std::filesystem::path file;
  std::string stage;
  std::string name;
  std::string checks;
  std::string adapter;
  json input;
  json expected;
  std::vector<MistakeRecord> mistakes;
  // The rows the reference put through GPT-2 small for this case when the generator wrote
  // it (positions embedded plus rows of logits; 0 for a case that runs no model): what
  // the case's CPU budget is derived from (judge/grade.hpp, case_budget). -1: the fixture
  // does not say (one written before it was recorded).
  int64_t model_rows = -1;
};

// The bytes of a regular file of at most max_bytes. Opened without blocking (a FIFO or a
// device is refused, never waited on). Throws FixtureError naming the file: missing,
// unreadable, not a regular file, too large.
std::string read_regular_file(const std::filesystem::path& file, size_t max_bytes);

// Inflates gzip data, refusing to produce more than max_bytes. Throws FixtureError
// naming `file`: not gzip, truncated, corrupt, inflates to more than max_bytes.
std::string gunzip(const std::string& raw, const std::filesystem::path& file, size_t max_bytes);

// Reads raw bytes, inflating when the name ends in .gz; at most kMaxFixtureBytes either
// way. Throws FixtureError naming the file.
std::string read_maybe_gzip(const std::filesystem::path& file);

// Loads and validates one fixture (format, version, fields, every tensor's and digest's
// shape against its data, JSON nesting at most kMaxJsonDepth). Throws FixtureError:
// "<file>: <problem>" and, where it helps, how to fix it.
Fixture load_fixture(const std::filesystem::path& file);
// The same for a fixture's text; `file` names it in messages.
Fixture parse_fixture(const std::string& text, const std::filesystem::path& file);

// The stage's fixtures in name order (names ending .json or .json.gz). Throws
// FixtureError when the folder is missing or holds no fixture, and when an entry with
// such a name is not a regular file (a folder, a FIFO, a broken link): reported, never
// skipped.
// The exception type a case's adapter must throw ({"error": TYPE} as its whole expected
// output), or "" for a case that expects an output.
std::string expected_error_type(const Fixture& fixture);

std::vector<std::filesystem::path> list_fixtures(const std::filesystem::path& stage_dir);

// Serializes (tensors as numbers) and writes <dir>/<case>.json, or <case>.json.gz when the
// text is larger than gzip_above bytes. Returns the path written.
std::filesystem::path write_fixture(const std::filesystem::path& dir, const Fixture& fixture,
                                    size_t gzip_above = 256 * 1024);

json fixture_to_json(const Fixture& fixture);

}  // namespace course
