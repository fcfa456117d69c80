// The graded cases, defined once: the generator runs each through the reference and
// writes fixtures/<stage>/<name>.json(.gz) with the reference's output as "expected".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "wire/tensor.hpp"

namespace course {

struct CaseSpec {
  std::string stage;
  std::string name;
  std::string checks;   // one sentence: what this case proves
  std::string adapter;
  json input;
  // Turns the adapter's output into what the fixture stores (default: as is).
  std::function<json(const json& output)> finalize;
};

std::vector<CaseSpec> cache_cases();   // cases_cache.cpp: stages 1-2
std::vector<CaseSpec> decode_cases();  // cases_decode.cpp: stages 3-5

}  // namespace course
