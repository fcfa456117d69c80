// Fuzz target: a whole safetensors file (model/safetensors.hpp): the header length, the
// JSON header and the data area's layout. Every problem must be a gpt2::ModelError; a
// file that is accepted must have every tensor's bytes inside the data it came with.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpt2.hpp"
#include "safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = gpt2::safetensors::File::from_bytes(std::string(reinterpret_cast<const char*>(data), size),
                                                          "fuzz.safetensors");
    unsigned sum = 0;
    for (const auto& t : file.tensors())  // touch the first and last byte: ASan checks them
      if (t.end > t.begin) sum += t.data[0] + t.data[t.end - t.begin - 1];
    (void)sum;
  } catch (const gpt2::ModelError&) {
  }
  return 0;
}
