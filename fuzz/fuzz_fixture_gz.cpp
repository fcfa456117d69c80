// Fuzz target: a gzip-compressed fixture (.json.gz): inflating with a cap, then the same
// reading as fuzz_fixture. The cap here is 1 MiB instead of kMaxFixtureBytes so that each
// run stays fast; the code path is the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "judge/stage_fixtures.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  try {
    const std::string text = course::gunzip(raw, "fuzz/01-case.json.gz", size_t(1) << 20);
    course::check_case_input(course::parse_fixture(text, "fuzz/01-case.json.gz"));
  } catch (const course::FixtureError&) {
  }
  return 0;
}
