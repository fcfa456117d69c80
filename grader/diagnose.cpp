#include "diagnose.hpp"

#include <stdexcept>

namespace course {

const std::vector<KnownMistake>& known_mistakes() {
  static const std::vector<KnownMistake> all = [] {
    std::vector<KnownMistake> v = cache_mistakes();
    for (const auto& m : decode_mistakes()) v.push_back(m);
    return v;
  }();
  return all;
}

Diagnosis diagnosis(const std::string& id, std::string explanation) {
  for (const auto& m : known_mistakes())
    if (id == m.id) return {m.id, m.title, std::move(explanation), m.lesson};
  throw std::logic_error("unknown diagnosis id " + id);
}

}  // namespace course
