// Bindings for stage chunked-prefill.
//
// run_serve_chunked
//   input   {"weights", "n_blocks": N, "budget": B, "requests": [{"prompt": [ids],
//            "max_new_tokens", "arrival"}]}
//   output  {"requests": [{"tokens": [ids], "logits": [max_new_tokens, vocab]}],
//            "steps": [{"admitted": [ids], "decoded": [ids],
//                       "chunks": [{"id", "from", "to"}], "free_blocks"}],
//            "work": the rows through the model}
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course::stage_chunked_prefill {

void register_adapters(AdapterTable& table) {
  table["run_serve_chunked"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = int_field(input, "n_blocks", 1, kMaxModelBlocks);
    const int budget = int_field(input, "budget", 1, kMaxBudget);
    const std::vector<Request> requests = requests_field(input, model);
    model.reset_work();
    ChunkedResult r = run_serve_chunked(model, n_blocks, budget, requests);
    json out = served_json(r.requests, requests);
    json steps = json::array();
    for (const ChunkedStepLog& s : r.steps) {
      json chunks = json::array();
      for (const ChunkLog& c : s.chunks) chunks.push_back({{"id", c.id}, {"from", c.from}, {"to", c.to}});
      steps.push_back({{"admitted", s.admitted}, {"decoded", s.decoded}, {"chunks", chunks},
                       {"free_blocks", s.free_blocks}});
    }
    out["steps"] = steps;
    out["work"] = work_json(model.work());
    return out;
  };
}

}  // namespace course::stage_chunked_prefill
