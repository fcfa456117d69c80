// Identification (diagnose.hpp): a catalogued mistake is named only when it agrees with
// the learner on every graded case.
#include "judge/diagnose.hpp"

#include <set>
#include <utility>

namespace course {

bool has_mistake_records(const Fixture& fixture) { return !fixture.mistakes.empty(); }

std::vector<Diagnosis> identify(const std::vector<CaseEvidence>& all) {
  std::vector<CaseEvidence> cases;  // those with records
  for (const CaseEvidence& c : all) {
    if (!c.fixture) return {};
    if (has_mistake_records(*c.fixture)) cases.push_back(c);
  }
  bool any_failed = false;
  for (const CaseEvidence& c : cases) {
    any_failed = any_failed || !c.passed;
    // A case without an output (a crash, an exception, a timeout) agrees with nothing.
    if (!c.passed && c.digest.empty()) return {};
  }
  if (!any_failed) return {};
  // The (id, parameter) pairs that agree with the learner on every case so far.
  using Key = std::pair<std::string, std::string>;
  std::set<Key> consistent;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::set<Key> here;
    for (const MistakeRecord& m : cases[i].fixture->mistakes)
      if (cases[i].passed ? m.output == kMistakePasses : m.output == cases[i].digest)
        here.insert({m.id, m.parameter});
    if (i == 0) {
      consistent = std::move(here);
      continue;
    }
    std::set<Key> both;
    for (const Key& k : consistent)
      if (here.count(k)) both.insert(k);
    consistent = std::move(both);
  }
  std::vector<Diagnosis> out;
  for (const Key& key : consistent) {
    bool catalogued = false;
    for (const KnownMistake& k : known_mistakes()) catalogued = catalogued || key.first == k.id;
    if (catalogued) out.push_back(diagnosis(key.first, key.second));
  }
  return out;
}

std::vector<int> shape_row_lengths(const json& rows) {
  std::vector<int> out;
  if (!rows.is_array()) return out;
  for (const auto& r : rows) {
    if (!r.is_array() || r.size() != 3 || !r[1].is_number_integer()) return {};
    out.push_back(r[1].get<int>());
  }
  return out;
}

std::string list_text(const std::vector<int>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

}  // namespace course
