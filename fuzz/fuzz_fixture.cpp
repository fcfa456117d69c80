// Fuzz target: a fixture's JSON text, as the grader reads it before grading (parse,
// check the header, every tensor and digest, the adapter's input) and as it shows it.
// Every problem must be a FixtureError; anything else escaping, or a sanitizer report,
// is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "judge/compare.hpp"
#include "judge/stage_fixtures.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    course::Fixture fixture = course::parse_fixture(text, "fuzz/01-case.json");
    course::check_case_input(fixture);
    (void)course::short_json(fixture.input);
  } catch (const course::FixtureError&) {
  }
  return 0;
}
