// Cases of stage preemption, on GPT-2 small: stage 9's requests admitted as soon as their
// prompts fit, over pools small enough that the running requests outgrow them, so that a
// request must be preempted, by swap or by recompute, and brought back.
//
// The generator proves while it writes them that preemption changes no number: every
// request's tokens and logits equal those of the request alone with no cache
// (Model::forward's, as stage 9's do); and that the two modes schedule alike (the same
// admissions, resumptions, preemptions, batches and free blocks, step by step).
#include "../grader/positions.hpp"
#include "course/preemption.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "preemption_cases.hpp"
#include "runner/weights.hpp"

namespace course::stage_preemption {

namespace {

std::vector<Request> requests_of(const json& list) {
  std::vector<Request> out;
  for (const json& r : list)
    out.push_back({r["prompt"].get<std::vector<int>>(), r["max_new_tokens"].get<int>(),
                   r["arrival"].get<int>()});
  return out;
}

}  // namespace

CaseSpec preempt_case(std::string name, std::string checks, int n_blocks, const std::string& mode,
                      json requests, int least_preemptions) {
  json input = {{"weights", decode_weights_spec()},
                {"n_blocks", n_blocks},
                {"mode", mode},
                {"requests", requests}};
  auto finalize = [requests, n_blocks, mode, least_preemptions](const json& out) {
    const bool recompute = mode == "recompute";
    const PreemptPositions p = preempt_positions(requests, out.at("steps"), recompute);
    require_work(out.at("work"), p.served + p.recomputed);
    int preemptions = 0;
    for (const json& step : out.at("steps")) {
      preemptions += int(step.at("preempted").size());
      if (recompute)
        require(step.at("swapped_blocks") == 0, "by recompute no block is held outside the pool");
    }
    require(preemptions >= least_preemptions, "the case preempts as often as it says");
    // The other mode: the same schedule, step by step.
    const PreemptResult other = serve_preemptive(
        model_for(decode_weights_spec()), n_blocks,
        recompute ? PreemptMode::swap : PreemptMode::recompute, requests_of(requests));
    require(other.steps.size() == out.at("steps").size(),
            "both modes take the same number of steps");
    for (size_t i = 0; i < other.steps.size(); ++i) {
      const json& s = out.at("steps")[i];
      const PreemptStepLog& o = other.steps[i];
      require(s.at("admitted") == json(o.admitted) && s.at("resumed") == json(o.resumed) &&
                  s.at("preempted") == json(o.preempted) && s.at("decoded") == json(o.decoded) &&
                  s.at("free_blocks") == o.free_blocks,
              "both modes schedule alike");
    }
    json expected = out;
    expected["requests"] = served_alone(requests, out.at("requests"));
    expected["work"] = expected_work(out.at("work"));
    return expected;
  };
  return {"preemption",           std::move(name), std::move(checks),
          "run_serve_preemptive", input,           finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(31, 40), b = words(32, 40), c = words(33, 40);
  cases.push_back(preempt_case(
      "01-no-preemption",
      "Nothing is preempted: request 1 arrives at step 2, when request 0's decode row needs the "
      "pool's last free block, so it waits a step and is admitted once request 0 is done.",
      2, "swap",
      json::array({serve_request(slice(a, 0, 15), 3, 0), serve_request(slice(c, 0, 5), 2, 2)}), 0));
  cases.push_back(preempt_case(
      "02-the-trace-by-recompute",
      "The lesson's trace by recompute: request 1 is preempted at step 3, its block freed, and "
      "at step 4 its 14 prompt tokens and first 2 tokens are prefilled again.",
      3, "recompute",
      json::array({serve_request(slice(a, 0, 15), 4, 0), serve_request(slice(b, 0, 14), 4, 0)}),
      1));
  const json three =
      json::array({serve_request(slice(a, 0, 15), 3, 0), serve_request(slice(b, 0, 15), 3, 0),
                   serve_request(slice(c, 0, 30), 4, 0)});
  cases.push_back(preempt_case(
      "03-the-latest-admitted-goes",
      "Three requests admitted at step 0; at step 2 requests 0 and 1 each need a new block and "
      "one is free: request 2, admitted last, is swapped out with its two blocks, and comes back "
      "once the others are done.",
      5, "swap", three, 1));
  cases.push_back(preempt_case(
      "04-the-same-by-recompute",
      "Case 03's requests by recompute: request 2's 31 cached positions are prefilled again "
      "when it comes back.",
      5, "recompute", three, 1));
  cases.push_back(preempt_case(
      "05-preempted-before-new",
      "Request 1 is preempted at step 3; at step 4 it waits beside request 2, new, and in id order "
      "request 1 comes back first; request 2's three blocks then do not fit, so it waits.",
      3, "recompute",
      json::array({serve_request(slice(a, 0, 15), 4, 0), serve_request(slice(b, 0, 14), 4, 0),
                   serve_request(slice(c, 0, 33), 2, 3)}),
      1));
  cases.push_back(preempt_case(
      "06-the-lesson-s-trace",
      "The lesson's trace: two requests fill a pool of 3 blocks; at step 3 request 1 needs a "
      "block, none is free, and it is swapped out; it is swapped back in at step 4.",
      3, "swap",
      json::array({serve_request(slice(a, 0, 15), 4, 0), serve_request(slice(b, 0, 14), 4, 0)}),
      1));
  return cases;
}

}  // namespace course::stage_preemption
