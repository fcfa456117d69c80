// Fuzz target: stages/manifest.json, the course's stage table. Every problem must be a
// CourseError naming the file and the field.
#include <cstddef>
#include <cstdint>
#include <string>

#include "judge/stages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)course::parse_stage_table(std::string(reinterpret_cast<const char*>(data), size), "stages/manifest.json");
  } catch (const course::CourseError&) {
  }
  return 0;
}
