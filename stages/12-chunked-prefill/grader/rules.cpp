// What the grader knows of stage chunked-prefill's adapter beyond its input form
// (judge/adapter_rules.hpp): its work, every prompt position and every fed-back token once
// through every layer, however the prompts were cut.
#include "judge/localize.hpp"
#include "judge/work.hpp"

namespace course::stage_chunked_prefill {

namespace {

// Positions a request's sequence holds when it is done: its prompt, and every generated
// token but the last.
int64_t positions_of(const Fixture& fx) {
  int64_t n = 0;
  for (const json& r : fx.input.value("requests", json::array()))
    n += int64_t(r.value("prompt", json::array()).size()) + r.value("max_new_tokens", 1) - 1;
  return n;
}

const WorkRules kServeWork = {
    .positions_story =
        [](const Fixture& fx) {
          return count_text(positions_of(fx), "position") +
                 " (every request's prompt and the tokens fed back)";
        },
    // The sequences are released when their requests retire: no cache is left to count.
    .learner_held = [](const Fixture&, const json&) { return WorkHeld{}; },
    .note =
        [](const Fixture&, int64_t n) {
          return each_layer_took(n) + ", one per position, however the prompts were cut";
        },
};

// What the learner's own step logs say against the budget: the first step whose batch,
// as logged, holds more rows than the budget while it also holds a prompt piece (decode
// rows alone may exceed it: they always run).
Lines localize_serve_chunked(const Fixture& fx, const json& actual) {
  Lines out;
  const int64_t budget = fx.input.value("budget", int64_t(0));
  if (!actual.is_object() || !actual.contains("steps") || !actual["steps"].is_array()) return out;
  const json& steps = actual["steps"];
  for (size_t s = 0; s < steps.size(); ++s) {
    const json& step = steps[s];
    if (!step.is_object() || !step.value("decoded", json()).is_array() || !step.value("chunks", json()).is_array())
      return out;
    const int64_t decodes = int64_t(step["decoded"].size());
    int64_t piece_rows = 0;
    for (const json& c : step["chunks"]) {
      if (!c.is_object() || !c.value("from", json()).is_number_integer() || !c.value("to", json()).is_number_integer())
        return out;
      piece_rows += c["to"].get<int64_t>() - c["from"].get<int64_t>();
    }
    if (!step["chunks"].empty() && decodes + piece_rows > budget) {
      out.push_back("Your log of step " + std::to_string(s) + " has a batch of " +
                    count_text(decodes + piece_rows, "row") + " (" + count_text(decodes, "decode row") + " and " +
                    count_text(piece_rows, "prompt row") + "), over the budget of " + std::to_string(budget) +
                    (decodes > 0 ? ": the decode rows count against the budget too." : "."));
      return out;
    }
  }
  return out;
}

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_serve_chunked", .localize = localize_serve_chunked, .work = &kServeWork},
  };
  return rules;
}

}  // namespace course::stage_chunked_prefill
