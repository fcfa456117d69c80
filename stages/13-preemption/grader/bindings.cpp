// Binding of stage preemption's adapter: the preempting server on GPT-2. Like stage 9's,
// it calls the learner's server (course/preemption.hpp) directly: no adapter to write.
//
// run_serve_preemptive
//   input   {"weights", "n_blocks": N, "mode": "swap" | "recompute",
//            "requests": [{"prompt": [ids], "max_new_tokens", "arrival"}]}
//   output  {"requests": [{"tokens": [ids], "logits": [max_new_tokens, vocab]}],
//            "steps": [{"admitted", "resumed", "preempted", "decoded": [ids],
//                       "free_blocks", "swapped_blocks"}],
//            "work": the rows through the model}
#include "runner/bindings.hpp"

#include <string>

#include "course/preemption.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course::stage_preemption {

void register_adapters(AdapterTable& table) {
  table["run_serve_preemptive"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = int_field(input, "n_blocks", 1, kMaxModelBlocks);
    const json& mode = field(input, "mode");
    if (!mode.is_string() || (mode != "swap" && mode != "recompute"))
      throw BadInput("\"mode\" must be \"swap\" or \"recompute\"");
    const std::vector<Request> requests = requests_field(input, model);
    model.reset_work();
    PreemptResult r = serve_preemptive(
        model, n_blocks, mode == "swap" ? PreemptMode::swap : PreemptMode::recompute, requests);
    json out = served_json(r.requests, requests);
    json steps = json::array();
    for (const PreemptStepLog& s : r.steps)
      steps.push_back({{"admitted", s.admitted},
                       {"resumed", s.resumed},
                       {"preempted", s.preempted},
                       {"decoded", s.decoded},
                       {"free_blocks", s.free_blocks},
                       {"swapped_blocks", s.swapped_blocks}});
    out["steps"] = steps;
    out["work"] = work_json(model.work());
    return out;
  };
}

}  // namespace course::stage_preemption
