// The positions a preempting server puts through every layer, read from a case's requests
// and its step logs: the fixture generator proves the reference's work against it
// (gen/cases.cpp), and the grader says it (rules.cpp). Every request's prompt and fed-back
// tokens go through once; a resumption by recompute puts the request's cached length
// through again (its prompt and every token it had but the last).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace course::stage_preemption {

struct PreemptPositions {
  int64_t served = 0;      // every request's prompt + max_new_tokens - 1
  int64_t recomputed = 0;  // by recompute, the cached lengths prefilled again
};

// `requests`: the case's input requests; `steps`: the step logs ({"admitted", "resumed",
// "decoded"}), which must be well formed; `recompute`: the case's mode.
inline PreemptPositions preempt_positions(const nlohmann::json& requests,
                                          const nlohmann::json& steps, bool recompute) {
  PreemptPositions p;
  std::vector<int64_t> tokens(requests.size(), 0);  // tokens each request has so far
  for (const nlohmann::json& r : requests)
    p.served += int64_t(r.at("prompt").size()) + r.at("max_new_tokens").get<int64_t>() - 1;
  for (const nlohmann::json& step : steps) {
    for (const nlohmann::json& id : step.at("admitted")) tokens.at(id.get<size_t>()) = 1;
    if (recompute)
      for (const nlohmann::json& id : step.at("resumed")) {
        const size_t i = id.get<size_t>();
        p.recomputed += int64_t(requests.at(i).at("prompt").size()) + tokens.at(i) - 1;
      }
    for (const nlohmann::json& id : step.at("decoded")) ++tokens.at(id.get<size_t>());
  }
  return p;
}

}  // namespace course::stage_preemption
