#include "judge/diagnose.hpp"

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
