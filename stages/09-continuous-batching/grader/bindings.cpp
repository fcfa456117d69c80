// Binding of stage continuous-batching's adapter: the batching server on GPT-2.
//
// run_serve
//   input   {"weights", "n_blocks": N, "requests": [{"prompt": [ids], "max_new_tokens",
//            "arrival"}]}
//   output  {"requests": [{"tokens": [ids], "logits": [max_new_tokens, vocab]}],
//            "steps": [{"prefilled": [ids], "decoded": [ids], "free_blocks"}]}
#include "runner/bindings.hpp"

#include <string>

#include "course/adapters.hpp"
#include "course/batching.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course {

// The server helpers of runner/bindings.hpp, shared with stage chunked-prefill.
int int_field(const json& input, const char* name, int least, int most) {
  const json& n = field(input, name);
  if (!n.is_number_integer() || n.get<int64_t>() < least || n.get<int64_t>() > most)
    throw BadInput(std::string("\"") + name + "\" must be a whole number from " +
                   std::to_string(least) + " to " + std::to_string(most));
  return n.get<int>();
}

std::vector<Request> requests_field(const json& input, const gpt2::Model& model) {
  const json& list = field(input, "requests");
  if (!list.is_array() || list.empty() || list.size() > size_t(kMaxRequests))
    throw BadInput("\"requests\" must be a list of 1 to " + std::to_string(kMaxRequests) +
                   " requests");
  std::vector<Request> out;
  for (const json& r : list) {
    Request req;
    req.prompt = tokens_field(r, "prompt", model, false);
    req.max_new_tokens = int_field(r, "max_new_tokens", 1, kMaxNewTokens);
    req.arrival = int_field(r, "arrival", 0, kMaxArrival);
    out.push_back(std::move(req));
  }
  return out;
}

json served_json(const std::vector<Served>& served, const std::vector<Request>& requests) {
  json out = json::array();
  for (size_t i = 0; i < served.size(); ++i) {
    const int64_t steps = i < requests.size() ? requests[i].max_new_tokens : 0;
    out.push_back({{"tokens", served[i].tokens}, {"logits", logits_json(served[i].logits, steps, true)}});
  }
  return json{{"requests", out}};
}

namespace stage_continuous_batching {

void register_adapters(AdapterTable& table) {
  table["run_serve"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = int_field(input, "n_blocks", 1, kMaxModelBlocks);
    const std::vector<Request> requests = requests_field(input, model);
    ServeResult r = serve(model, n_blocks, requests);
    json out = served_json(r.requests, requests);
    json steps = json::array();
    for (const StepLog& s : r.steps)
      steps.push_back(
          {{"prefilled", s.prefilled}, {"decoded", s.decoded}, {"free_blocks", s.free_blocks}});
    out["steps"] = steps;
    return out;
  };
}

}  // namespace stage_continuous_batching

}  // namespace course
