// make-weights: writes the synthetic GPT-2 small weights of the decode stages to a file,
// once, at build time (gpt2::write_synthetic_file), so that each runner maps them
// (read-only, in place) instead of generating 124M values. Trusted code: the build runs
// it, never a runner.
//
//   make-weights --seed 2026 --out build/weights/gpt2-small-2026.weights
//   make-weights --seed 2026 --check FILE     (exit 1 when FILE is not those weights)
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "synthetic_file.hpp"

int main(int argc, char** argv) {
  std::string out, check;
  long long seed = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seed")
      seed = std::atoll(argv[i + 1]);
    else if (flag == "--out")
      out = argv[i + 1];
    else if (flag == "--check")
      check = argv[i + 1];
    else
      seed = -2;
  }
  if (seed < 0 || out.empty() == check.empty() || argc % 2 == 0) {
    std::cerr << "usage: make-weights --seed N (--out FILE | --check FILE)\n";
    return 2;
  }
  try {
    if (!out.empty())
      gpt2::write_synthetic_file(out, uint64_t(seed));
    else
      gpt2::verify_synthetic_file(check, uint64_t(seed));
  } catch (const std::exception& e) {
    std::cerr << "make-weights: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
