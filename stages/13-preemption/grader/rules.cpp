// What the grader knows of stage preemption's adapter beyond its input form
// (judge/adapter_rules.hpp): a localizer that reads the learner's step logs against the
// expected ones and names the first step and field that differ, then the first request
// whose tokens or logits differ.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "judge/adapter_rules.hpp"
#include "judge/localize.hpp"
#include "judge/work.hpp"
#include "positions.hpp"

namespace course::stage_preemption {

namespace {

// What each logged field is, for the localizer's sentence.
const char* field_meaning(const std::string& name) {
  if (name == "admitted") return "the new requests admitted and prefilled";
  if (name == "resumed") return "the preempted requests brought back";
  if (name == "preempted")
    return "the running requests preempted, in the order chosen, the one admitted most recently "
           "first";
  if (name == "decoded")
    return "the rows of the decode batch: the requests running before the step, in id order";
  if (name == "free_blocks") return "the pool's free blocks at the end of the step";
  return "the blocks held outside the pool at the end of the step";
}

std::string value_text(const json& v) {
  return v.is_array() ? v.dump() : v.is_number_integer() ? v.dump() : "missing";
}

// The first step and field at which the learner's log departs from the expected one.
void steps_findings(const json& es, const json& as, Lines& out) {
  if (!as.is_array()) {
    out.push_back("steps: not a list of steps.");
    return;
  }
  const size_t n = std::min(es.size(), as.size());
  for (size_t i = 0; i < n; ++i) {
    for (const char* name :
         {"admitted", "resumed", "preempted", "decoded", "free_blocks", "swapped_blocks"}) {
      const json e = es[i].value(name, json());
      const json a = as[i].is_object() ? as[i].value(name, json()) : json();
      if (e == a) continue;
      out.push_back(std::string(i == 0 ? "Your step logs"
                                       : "Your step logs agree with the rules' before step " +
                                             std::to_string(i) + ", and") +
                    " depart from them at step " + std::to_string(i) + ": its \"" + name +
                    "\" is " + value_text(a) + ", expected " + value_text(e) + " (" +
                    field_meaning(name) + ").");
      return;
    }
  }
  if (es.size() != as.size()) {
    out.push_back("Your log has " + count_text(int64_t(as.size()), "step") + ", the rules' " +
                  count_text(int64_t(es.size()), "step") + "; the " + std::to_string(n) +
                  " steps both have agree" +
                  (as.size() < es.size() ? ": your loop stopped early." : "."));
  }
}

// The first request whose tokens or logits differ, in id order.
void requests_findings(const json& er, const json& ar, Lines& out) {
  if (!ar.is_array() || ar.size() != er.size()) {
    out.push_back("requests: " + std::to_string(ar.is_array() ? ar.size() : 0) +
                  " served, expected " + std::to_string(er.size()) + ".");
    return;
  }
  for (size_t id = 0; id < er.size(); ++id) {
    const json et = er[id].value("tokens", json());
    const json at = ar[id].is_object() ? ar[id].value("tokens", json()) : json();
    const std::optional<Digest> el = digest_at(er[id], "logits");
    const std::optional<Tensor> al =
        ar[id].is_object() ? tensor_at(ar[id], "logits") : std::nullopt;
    if (et != at) {
      out.push_back("Request " + std::to_string(id) + "'s tokens are " + at.dump() + ", expected " +
                    et.dump() + ".");
      return;
    }
    if (!el) continue;
    if (std::string problem = request_logits_shape_problem(id, al, *el); !problem.empty()) {
      out.push_back(std::move(problem));
      return;
    }
    const std::vector<bool> ok = rows_matching(*el, *al);
    const auto wrong = std::find(ok.begin(), ok.end(), false);
    if (wrong != ok.end()) {
      out.push_back(
          "Request " + std::to_string(id) + "'s tokens are right, but the logits of its token " +
          std::to_string(wrong - ok.begin()) +
          " are not: a request's numbers must be those of an uninterrupted run, preempted or not.");
      return;
    }
  }
}

Lines localize_serve_preemptive(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  steps_findings(fx.expected.value("steps", json::array()), actual.value("steps", json()), out);
  requests_findings(fx.expected.value("requests", json::array()), actual.value("requests", json()),
                    out);
  return out;
}

// The positions the case's work is to count, from the input and the expected step logs;
// nothing when those cannot be read (the fixture checks refuse such a fixture first).
std::optional<PreemptPositions> positions_of(const Fixture& fx) {
  try {
    return preempt_positions(fx.input.at("requests"), fx.expected.at("steps"),
                             fx.input.value("mode", "") == "recompute");
  } catch (const json::exception&) {
    return std::nullopt;
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

std::string positions_said(const Fixture& fx) {
  const std::optional<PreemptPositions> p = positions_of(fx);
  if (!p) return "every request's prompt and fed-back tokens";
  std::string s =
      count_text(p->served, "position") + ", every request's prompt and fed-back tokens once";
  if (p->recomputed > 0)
    s += ", and " + count_text(p->recomputed, "position") +
         " recomputed as preempted requests came back";
  return s;
}

const WorkRules kPreemptWork = {
    .positions_story = positions_said,
    // The sequences are released when their requests retire: no cache is left to count.
    .learner_held = [](const Fixture&, const json&) { return WorkHeld{}; },
    .note = [](const Fixture& fx,
               int64_t n) { return each_layer_took(n) + ": " + positions_said(fx); },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_serve_preemptive",
       .localize = localize_serve_preemptive,
       .work = &kPreemptWork},
  };
  return rules;
}

}  // namespace course::stage_preemption
