// Localization: an adapter's localizer and work findings (its stage's rules,
// judge/adapter_rules.hpp), and the helpers the localizers share.
#include "judge/localize.hpp"

#include "judge/adapter_rules.hpp"

#include <cmath>
#include <cstring>

namespace course {

std::vector<std::string> localize(const Fixture& fx, const json& actual) {
  Lines lines;
  const AdapterRules* rules = adapter_rules(fx.adapter);
  if (!rules) return lines;
  if (rules->localize) lines = rules->localize(fx, actual);
  if (rules->work)
    for (std::string& w : work_findings(fx, actual)) lines.push_back(std::move(w));
  return lines;
}

// Whether the learner's "continued" has one entry per expected continuation; if not, the
// finding is said in `out` and nothing more is read from them.
bool same_count_of_continuations(const json& e_cont, const json& a_cont, Lines& out) {
  if (a_cont.is_array() && a_cont.size() == e_cont.size()) return true;
  out.push_back("continued: " + std::to_string(e_cont.size()) + " continuations expected, got " + short_json(a_cont, 60) +
                ". Nothing more is read from them.");
  return false;
}

std::string shape_row_problem(const json& row) {
  const bool ints = row.is_array() && row.size() == 3 && row[0].is_number_integer() &&
                    row[1].is_number_integer() && row[2].is_number_integer();
  if (ints && row[0] == 12 && row[2] == 64 && row[1].get<int64_t>() >= 0) return "";
  return short_json(row, 60) + " is not a shape row [12, length, 64] (n_heads, then the length, then head_dim)";
}

bool rows_as_expected(const json& expected, const json& actual, const std::string& what, Lines& out,
                      bool* readable) {
  if (readable) *readable = false;
  if (!actual.is_array()) {
    out.push_back(what + ": expected a list of " + std::to_string(expected.size()) + " shape rows, got " +
                  short_json(actual, 60) + ".");
    return false;
  }
  if (actual.size() != expected.size()) {
    out.push_back(what + ": " + std::to_string(actual.size()) + " shape rows, one per layer expected (" +
                  std::to_string(expected.size()) + "). Nothing more is read from them.");
    return false;
  }
  for (size_t l = 0; l < actual.size(); ++l) {
    std::string problem = shape_row_problem(actual[l]);
    if (!problem.empty()) {
      out.push_back(what + ": row " + std::to_string(l) + " (layer " + std::to_string(l) + ") " + problem +
                    ". Nothing more is read from these rows.");
      return false;
    }
  }
  if (readable) *readable = true;
  std::vector<int> e = shape_row_lengths(expected), a = shape_row_lengths(actual);
  if (e == a) return true;
  std::vector<int> differing;
  for (size_t l = 0; l < e.size(); ++l)
    if (e[l] != a[l]) differing.push_back(int(l));
  const int first = differing.front();
  std::string text = what + ": the lengths are " + list_text(a) + ", expected " + list_text(e) + ". ";
  text += first == 0   ? std::string("Layer 0")
          : first == 1 ? "Layer 0 is right; layer 1"
                       : "Layers " + range_text(0, first - 1) + " are right; layer " + std::to_string(first);
  text += " reports " + count_text(a[size_t(first)], "position") + " where it should hold " +
          std::to_string(e[size_t(first)]);
  if (differing.size() > 1) text += " (layers that differ: " + index_list(differing) + ")";
  out.push_back(text + ".");
  return false;
}

std::optional<Tensor> tensor_at(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !is_tensor(j[key])) return std::nullopt;
  try {
    return tensor_from_json(j[key]);
  } catch (const TensorError&) {
    return std::nullopt;
  }
}

std::optional<Digest> digest_at(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !is_digest(j[key])) return std::nullopt;
  try {
    return digest_from_json(j[key]);
  } catch (const TensorError&) {
    return std::nullopt;
  }
}

std::string range_text(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + " .. " + std::to_string(last);
}

std::string index_list(const std::vector<int>& values) {
  // Runs of consecutive values as "a .. b".
  std::string s;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + (j > i + 1 ? range_text(values[i], values[j])
                                              : std::to_string(values[i]) + (j == i + 1 ? ", " + std::to_string(values[j]) : ""));
    i = j + 1;
  }
  return s;
}

std::vector<int> ints_of(const json& j) {
  std::vector<int> v;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) v.push_back(x.get<int>());
  return v;
}

std::optional<std::vector<int>> exact_ints(const json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<int> v = ints_of(j);
  if (v.size() != j.size()) return std::nullopt;
  return v;
}

std::string count_text(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 || noun == "ulp" ? "" : "s");
}

int64_t ulp_distance(float a, float b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return -1;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);  // monotonic in f
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

std::string request_logits_shape_problem(size_t id, const std::optional<Tensor>& actual, const Digest& expected) {
  if (actual && actual->shape == expected.shape) return "";
  return "Request " + std::to_string(id) + "'s logits are " +
         (actual ? shape_text(actual->shape) : std::string("missing")) + ", expected " + shape_text(expected.shape) +
         ".";
}

}  // namespace course
