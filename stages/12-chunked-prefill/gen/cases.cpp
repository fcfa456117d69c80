// Cases of stage chunked-prefill, on GPT-2 small: stage 9's requests served with a budget
// of rows per step, prompts cut into pieces that share each step's batch with the decode
// rows.
//
// The generator proves while it writes them that the chunking changes no number: every
// request's tokens and logits equal those of the request alone with no cache
// (Model::forward's, as stage 9's do), and every layer took each position once.
#include "chunked_cases.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"

namespace course::stage_chunked_prefill {

CaseSpec chunked_serve_case(std::string name, std::string checks, int n_blocks, int budget, json requests) {
  json input = {{"weights", decode_weights_spec()}, {"n_blocks", n_blocks}, {"budget", budget},
                {"requests", requests}};
  auto finalize = [requests, budget](const json& out) {
    int64_t positions = 0;
    for (const json& r : requests)
      positions += int64_t(r["prompt"].size()) + r["max_new_tokens"].get<int64_t>() - 1;
    require_work(out.at("work"), positions);
    for (const json& step : out.at("steps")) {
      int64_t rows = int64_t(step.at("decoded").size());
      for (const json& c : step.at("chunks")) rows += c.at("to").get<int64_t>() - c.at("from").get<int64_t>();
      require(rows <= budget || step.at("chunks").empty(), "a step's rows stay within the budget");
    }
    json expected = out;
    expected["requests"] = served_alone(requests, out.at("requests"));
    expected["work"] = expected_work(out.at("work"));
    return expected;
  };
  return {"chunked-prefill", std::move(name), std::move(checks), "run_serve_chunked", input, finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(21, 40), b = words(22, 40), c = words(23, 40);
  cases.push_back(chunked_serve_case(
      "01-a-prompt-in-three-pieces",
      "A 10-token prompt with a budget of 4: pieces [0, 4), [4, 8) and [8, 10) at steps 0 to 2, "
      "the first token from the last piece; every number as with the prompt prefilled whole.",
      8, 4, json::array({serve_request(slice(a, 0, 10), 3, 0)})));
  cases.push_back(chunked_serve_case(
      "02-a-budget-of-one",
      "A budget of 1 row: the prompt goes in one token a step, and still gives the numbers of a "
      "whole prefill.",
      8, 1, json::array({serve_request(slice(b, 0, 5), 2, 0)})));
  cases.push_back(chunked_serve_case(
      "03-a-budget-above-every-prompt",
      "A budget of 16: each prompt is one piece, and two prompts share step 0's batch.",
      8, 16, json::array({serve_request(slice(a, 0, 6), 2, 0), serve_request(slice(c, 0, 5), 3, 0)})));
  cases.push_back(chunked_serve_case(
      "04-decodes-share-the-budget",
      "Request 0 decodes from step 1 on; request 1 arrives at step 1 with 9 prompt tokens, and "
      "each step's budget of 4 holds request 0's decode row and 3 of them.",
      8, 4, json::array({serve_request(slice(a, 0, 3), 5, 0), serve_request(slice(b, 0, 9), 2, 1)})));
  cases.push_back(chunked_serve_case(
      "05-two-prompts-in-one-step",
      "Two prompts arriving together with a budget of 6: request 0's 4 tokens and request 1's "
      "first 2 at step 0, then request 0's decode row and request 1's last 5.",
      8, 6, json::array({serve_request(slice(a, 0, 4), 3, 0), serve_request(slice(c, 0, 7), 2, 0)})));
  cases.push_back(chunked_serve_case(
      "06-the-lesson-s-trace",
      "The lesson's worked trace: three requests, a budget of 4; request 1's prompt goes in over "
      "steps 1 to 3 beside request 0's decodes, and shares step 3 with request 2's first piece.",
      8, 4,
      json::array({serve_request(slice(a, 0, 2), 6, 0), serve_request(slice(b, 0, 7), 2, 1),
                   serve_request(slice(c, 0, 3), 2, 1)})));
  return cases;
}

}  // namespace course::stage_chunked_prefill
