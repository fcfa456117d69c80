// Cases of stage continuous-batching, on GPT-2 small.
//
// The generator proves while it writes them: every request's logits and tokens equal those
// of the request run alone with no cache, Model::forward's, bit for bit. The scheduling
// (which requests are admitted and batched) is what the reference did; the lesson gives
// the rules that fix it.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"

namespace course {

json serve_request(std::vector<int> prompt, int max_new_tokens, int arrival) {
  return {{"prompt", prompt}, {"max_new_tokens", max_new_tokens}, {"arrival", arrival}};
}

json served_alone(const json& requests, const json& served) {
  const gpt2::Model& model = model_for(decode_weights_spec());
  const size_t vocab = size_t(model.config().vocab);
  json expected = served;
  for (size_t i = 0; i < requests.size(); ++i) {
    // Alone and without a cache: the prompt and every generated token but the last.
    std::vector<int> prompt = requests[i]["prompt"].get<std::vector<int>>();
    const std::vector<int> tokens = served[i]["tokens"].get<std::vector<int>>();
    std::vector<int> seq = concat(prompt, slice(tokens, 0, tokens.size() - 1));
    const std::vector<float> f = model.forward(seq);  // [seq, vocab]
    const Tensor logits = tensor_from_json(served[i]["logits"]);
    require(same_bits(logits.data, f.data() + (prompt.size() - 1) * vocab, tokens.size() * vocab),
            "request " + std::to_string(i) + "'s logits equal Model::forward's of the request alone");
    for (size_t t = 0; t < tokens.size(); ++t) {
      int best = 0;
      const float* row = f.data() + (prompt.size() - 1 + t) * vocab;
      for (size_t j = 1; j < vocab; ++j)
        if (row[j] > row[best]) best = int(j);
      require(tokens[t] == best, "request " + std::to_string(i) + "'s tokens are the greedy choices alone");
    }
    expected[i]["logits"] = digest_logits(served[i]["logits"]);
  }
  return expected;
}

CaseSpec serve_case(std::string name, std::string checks, int n_blocks, json requests) {
  json input = {{"weights", decode_weights_spec()}, {"n_blocks", n_blocks}, {"requests", requests}};
  auto finalize = [requests](const json& out) {
    json expected = out;
    expected["requests"] = served_alone(requests, out["requests"]);
    return expected;
  };
  return {"continuous-batching", std::move(name), std::move(checks), "run_serve", input, finalize};
}

namespace stage_continuous_batching {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(11, 40), b = words(12, 40), c = words(13, 40);
  cases.push_back(serve_case("01-one-request",
                             "One request alone: prefill at step 0, then one decode row per step.",
                             8, json::array({serve_request(slice(a, 0, 5), 3, 0)})));
  cases.push_back(
      serve_case("02-two-together",
                 "Two requests arriving together are prefilled at step 0 and decoded as one batch "
                 "of 2 rows from step 1.",
                 8, json::array({serve_request(slice(a, 0, 5), 3, 0), serve_request(slice(b, 0, 4), 3, 0)})));
  cases.push_back(
      serve_case("03-staggered-arrivals",
                 "Requests arriving at steps 0, 1 and 2 join the batch as they come and leave it "
                 "when done; each equals the request run alone.",
                 8,
                 json::array({serve_request(slice(a, 0, 6), 3, 0), serve_request(slice(b, 0, 3), 2, 1),
                              serve_request(slice(c, 0, 4), 2, 2)})));
  cases.push_back(
      serve_case("04-waiting-for-blocks",
                 "A pool of 3 blocks: the third request waits until the first retires and gives "
                 "its blocks back.",
                 3,
                 json::array({serve_request(slice(a, 0, 14), 4, 0), serve_request(slice(b, 0, 3), 3, 0),
                              serve_request(slice(c, 0, 3), 2, 0)})));
  cases.push_back(
      serve_case("05-finishing-at-different-steps",
                 "Requests wanting 1, 2 and 3 tokens: the first retires right after its prefill, "
                 "and no finished request is decoded again.",
                 8,
                 json::array({serve_request(slice(a, 0, 4), 1, 0), serve_request(slice(b, 0, 4), 2, 0),
                              serve_request(slice(c, 0, 4), 3, 0)})));
  cases.push_back(
      serve_case("06-across-a-block-boundary",
                 "Sequences that cross from 16 to 17 positions while batched: each row writes into "
                 "and reads from its own blocks.",
                 8, json::array({serve_request(slice(a, 0, 14), 4, 0), serve_request(slice(b, 0, 15), 3, 0)})));
  // A request's last token is never fed back: 15 + 2 - 1 = 16 positions, one block. Sized
  // one position longer it would take two, and the second request would wait.
  cases.push_back(
      serve_case("07-ending-on-a-block-boundary",
                 "A request of a 15-token prompt and 2 new tokens ends holding 16 positions "
                 "(its last token is never fed back), one block: in a pool of 2 blocks a "
                 "second request is admitted beside it at step 0.",
                 2, json::array({serve_request(slice(a, 0, 15), 2, 0), serve_request(slice(b, 0, 3), 1, 0)})));
  return cases;
}

}  // namespace stage_continuous_batching

}  // namespace course
