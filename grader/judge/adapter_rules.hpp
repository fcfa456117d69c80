// What the grader knows of each adapter beyond its input form (wire/adapter_spec.hpp): how
// to read a failing output (its localizer), the work a GPT-2 run is to do and how to say
// it, and whether a failing case may be run again cut short to find the step where it
// departs. The stage that introduces an adapter states its rules in its own folder
// (stages/<folder>/grader/rules.cpp); CMake gathers them from the manifest
// (stage_adapter_rules, kvcourse_stage_table). Nothing else in the grader tests an
// adapter's name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge/localize.hpp"

namespace course {

// What the learner's own output says a GPT-2 call computed: `held` positions its caches
// gained (or, for a prefix cache, prompt tokens it did not serve), with how that figure is
// read from the output. held < 0: the output does not say.
struct WorkHeld {
  int64_t held = -1;
  std::string story;     // "one per position your cache holds (6)"
  bool several = false;  // the figure adds up several caches
  std::string noun = "the positions your cache holds";
};

// How one adapter's work counts are read and said (judge/work.cpp: work_findings,
// work_note). The pieces the stages share are in judge/work.hpp.
struct WorkRules {
  // The call's new positions, as a phrase: "9 tokens", "5 + 3 tokens".
  std::string (*positions_story)(const Fixture& fx);
  // What the learner's output says was computed.
  WorkHeld (*learner_held)(const Fixture& fx, const json& actual);
  // A passed case's note, given the rows each layer took ("work: each layer took 9 rows,
  // one per token; ..."): what the cache saved.
  std::string (*note)(const Fixture& fx, int64_t rows_per_layer);
  // The rows are to be one per prompt token the prefix cache did not serve (the findings
  // speak of the cache's tokens rather than of the cache's positions).
  bool counts_unserved_tokens = false;
};

struct AdapterRules {
  const char* name;
  // Where a failing output departs from the expected one (judge/localize.hpp); none: the
  // comparison's own lines only.
  Lines (*localize)(const Fixture& fx, const json& actual) = nullptr;
  // A GPT-2 run whose output carries "work": its findings follow the localizer's lines.
  const WorkRules* work = nullptr;
  // A failed case may be run again on cut-short inputs (grade.cpp: locate_by_runs): at
  // most replay_runs(fx) runs (0: none), read by locate_by_runs.
  int (*replay_runs)(const Fixture& fx) = nullptr;
  Lines (*locate_by_runs)(const Fixture& fx, const json& actual, const PlanRunner& run) = nullptr;
  // Stage speed: a case of this adapter whose input says "timed": true is also timed
  // against the model's own loop (judge/speed.hpp), once its numbers pass.
  bool timed = false;
};

// Each stage's rules (stage_<id>::adapter_rules in its grader/rules.cpp), in course order:
// the table CMake writes from stages/manifest.json.
struct StageAdapterRules {
  const char* slug;
  const std::vector<AdapterRules>& (*rules)();
};
const std::vector<StageAdapterRules>& stage_adapter_rules();

// The rules of `adapter`, or nullptr when no stage states any (an adapter a fixture names
// but no stage knows: the fixture checks refuse it first, wire/adapter_spec.hpp).
const AdapterRules* adapter_rules(const std::string& adapter);

}  // namespace course
