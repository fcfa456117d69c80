// What the grader knows of stage sliding-window's adapter beyond its input form
// (judge/adapter_rules.hpp): a localizer that walks the ops in order and names the first
// whose total, held positions, refusal or logits differ from the expected ones, then, when
// every op agrees, the first layer of the cache at the end (and of the saved clone) that
// differs, down to the head and held row of its first differing keys or values.
#include <algorithm>
#include <cctype>
#include <optional>

#include "judge/adapter_rules.hpp"
#include "judge/localize.hpp"
#include "wire/digest.hpp"

namespace course::stage_sliding_window {

namespace {

std::string list_text(const json& v) {
  return v.is_array() ? v.dump() : v.is_null() ? "missing" : v.dump();
}

// "op 3 (a decode step at position 9)": what the op is, and where it starts, from the
// expected totals (the learner's may be wrong).
std::string op_text(const Fixture& fx, size_t i) {
  const json& ops = fx.input.value("ops", json::array());
  const json& steps = fx.expected.value("steps", json::array());
  const int64_t at =
      i == 0 ? fx.input.value("past", int64_t(0)) : steps[i - 1].value("total", int64_t(0));
  std::string what = "op " + std::to_string(i);
  if (i >= ops.size() || !ops[i].is_object()) return what;
  const json& op = ops[i];
  if (op.contains("prefill") && op["prefill"].is_array()) {
    const int64_t n = int64_t(op["prefill"].size());
    return what + " (a prefill of " + count_text(n, "token") + " from position " +
           std::to_string(at) + ")";
  }
  if (op.contains("decode"))
    return what + " (a decode step at position " + std::to_string(at) + ")";
  if (op.contains("crop"))
    return what + " (crop(" + op["crop"].dump() + ") at a total of " + std::to_string(at) + ")";
  return what + " (a saved clone)";
}

// The first differing field of step i, as a sentence; "" when the step agrees.
std::string step_finding(const Fixture& fx, size_t i, const json& e, const json& a) {
  const std::string op = op_text(fx, i);
  const std::string lead =
      i == 0 ? "" : (i == 1 ? "op 0 agrees; " : "ops " + range_text(0, int(i) - 1) + " agree; ");
  auto sentence = [&](const std::string& s) {
    std::string t = lead + s;
    t[0] = char(std::toupper(static_cast<unsigned char>(t[0])));
    return t;
  };
  if (!a.is_object())
    return sentence(op + " has no step record, expected {\"total\", \"positions\", ...}.");
  const bool e_refused = e.contains("refused"), a_refused = a.contains("refused");
  if (e_refused && !a_refused)
    return sentence(
        op +
        " must be refused with std::length_error: it would pass position 1023, GPT-2's last; "
        "your code did not throw.");
  if (!e_refused && a_refused)
    return sentence(op + " threw std::length_error, but it fits below position 1024.");
  if (e.value("total", json()) != a.value("total", json()))
    return sentence("after " + op + " the total is " + list_text(a.value("total", json())) +
                    ", expected " + list_text(e.value("total", json())) + ".");
  if (e.value("positions", json()) != a.value("positions", json()))
    return sentence("after " + op + " layer 0 holds positions " +
                    list_text(a.value("positions", json())) + ", expected " +
                    list_text(e.value("positions", json())) + ".");
  if (const std::optional<Digest> el = digest_at(e, "logits")) {
    const std::optional<Tensor> al = tensor_at(a, "logits");
    if (!al || al->shape != el->shape)
      return sentence(op + "'s logits are " +
                      (al ? shape_text(al->shape) : std::string("missing")) + ", expected " +
                      shape_text(el->shape) + ".");
    const std::vector<bool> ok = rows_matching(*el, *al);
    if (std::find(ok.begin(), ok.end(), false) != ok.end())
      return sentence("after " + op +
                      " the total and layer 0's held positions are right, but its logits are not.");
  }
  return "";
}

// The first layer whose total, held positions, keys or values differ in a cache at the end.
void cache_findings(const json& e, const json& a, const std::string& what, Lines& out) {
  if (!a.is_object()) {
    out.push_back(what + " is missing.");
    return;
  }
  const json et = e.value("totals", json()), at = a.value("totals", json());
  const json ep = e.value("positions", json()), ap = a.value("positions", json());
  for (size_t l = 0; l < et.size() && l < ep.size(); ++l) {
    const json atl = at.is_array() && l < at.size() ? at[l] : json();
    const json apl = ap.is_array() && l < ap.size() ? ap[l] : json();
    if (et[l] != atl) {
      out.push_back(what + ": layer " + std::to_string(l) + "'s total is " + list_text(atl) +
                    ", expected " + et[l].dump() + ".");
      return;
    }
    if (ep[l] != apl) {
      out.push_back(what + ": layer " + std::to_string(l) + " holds positions " + list_text(apl) +
                    ", expected " + ep[l].dump() + ".");
      return;
    }
  }
  for (const char* name : {"keys", "values"}) {
    const std::optional<Digest> ed = digest_at(e, name);
    const std::optional<Tensor> ad = tensor_at(a, name);
    if (!ed) continue;
    if (!ad || ad->shape != ed->shape) {
      out.push_back(what + ": its " + name + " are " +
                    (ad ? shape_text(ad->shape) : std::string("missing")) + ", expected " +
                    shape_text(ed->shape) + ".");
      return;
    }
    const std::vector<bool> ok = rows_matching(*ed, *ad);
    const auto wrong = std::find(ok.begin(), ok.end(), false);
    if (wrong == ok.end()) continue;
    // Rows of [layer, head, held, 64], row-major.
    const int64_t row = wrong - ok.begin(), held = ed->shape.size() == 4 ? ed->shape[2] : 0;
    if (held <= 0) return;
    const int64_t layer = row / (12 * held), head = row / held % 12, i = row % held;
    const json positions = ep.is_array() && size_t(layer) < ep.size() ? ep[size_t(layer)] : json();
    const std::string position = positions.is_array() && size_t(i) < positions.size()
                                     ? " (position " + positions[size_t(i)].dump() + ")"
                                     : "";
    out.push_back(what + " holds the expected positions, but its " + name +
                  " first differ at layer " + std::to_string(layer) + ", head " +
                  std::to_string(head) + ", held row " + std::to_string(i) + position + ".");
    return;
  }
}

Lines localize_sliding_window(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  const json es = fx.expected.value("steps", json::array());
  const json as = actual.value("steps", json());
  if (!as.is_array() || as.size() != es.size()) {
    out.push_back("steps: " + std::to_string(as.is_array() ? as.size() : 0) +
                  " records, expected one per op (" + std::to_string(es.size()) + ").");
    return out;
  }
  for (size_t i = 0; i < es.size(); ++i)
    if (std::string finding = step_finding(fx, i, es[i], as[i]); !finding.empty()) {
      out.push_back(std::move(finding));
      return out;
    }
  cache_findings(fx.expected.value("cache", json()), actual.value("cache", json()),
                 "Every op agrees; the cache at the end", out);
  if (!out.empty() || !fx.expected.contains("saved")) return out;
  cache_findings(
      fx.expected["saved"], actual.value("saved", json()),
      "Every op and the cache at the end agree; the saved clone, read after the ops that followed "
      "its save,",
      out);
  return out;
}

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_sliding_window", .localize = localize_sliding_window},
  };
  return rules;
}

}  // namespace course::stage_sliding_window
