// Cases of stage rollback.
//
//  * Crop plans on one layer's KVCache (adapter run_cache_plan), with stage 1's
//    self-describing rows (support.cpp), so a report can say which append's row sits where.
//  * Speculative rounds on GPT-2 small (adapter run_speculative). The generator proves
//    that each round's logits, and the final cache, equal those of a model that only ever
//    saw the prompt, the accepted drafts and the `next` tokens, and that the prompt's cache
//    equals a fresh prefill of the prompt.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"

namespace course {

namespace {

// A crop plan; each append writes the next self-describing row.
class CropPlan {
 public:
  CropPlan& create() { return step({{"op", "create"}}); }
  CropPlan& append(int cache, int times = 1) {
    for (int t = 0; t < times; ++t) {
      json op = describing_row(next_append_++);
      op["op"] = "append";
      op["cache"] = cache;
      step(std::move(op));
    }
    return *this;
  }
  CropPlan& clone(int cache) { return step({{"op", "clone"}, {"cache", cache}}); }
  CropPlan& crop(int cache, int n) { return step({{"op", "crop"}, {"cache", cache}, {"n", n}}); }
  json input() const { return {{"plan", plan_}}; }

 private:
  CropPlan& step(json op) {
    plan_.push_back(std::move(op));
    return *this;
  }
  json plan_ = json::array();
  int next_append_ = 0;
};

CaseSpec plan_case(std::string name, std::string checks, const CropPlan& plan, bool expect_error = false) {
  CaseSpec c{"rollback", std::move(name), std::move(checks), "run_cache_plan", plan.input(), nullptr};
  c.expect_error = expect_error;
  return c;
}

// The token sequence a speculating model really saw: the prompt, then per round the
// accepted drafts and `next`.
std::vector<int> effective_tokens(const json& input) {
  std::vector<int> seq = input["prompt"].get<std::vector<int>>();
  for (const json& r : input["rounds"]) {
    const std::vector<int> draft = r["draft"].get<std::vector<int>>();
    seq.insert(seq.end(), draft.begin(), draft.begin() + r["accepted"].get<int>());
    seq.push_back(r["next"].get<int>());
  }
  return seq;
}

}  // namespace

CaseSpec speculative_case(std::string name, std::string checks, std::vector<int> prompt, json rounds) {
  json input = {{"weights", decode_weights_spec()}, {"prompt", prompt}, {"rounds", rounds}};
  auto finalize = [input, prompt](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    const std::vector<int> seq = effective_tokens(input);
    const std::vector<float> forward = model.forward(seq);  // [seq, vocab]
    const Tensor logits = tensor_from_json(out["logits"]);  // [n_rounds, vocab]
    // Round r's `next` sits at position (its index in the effective sequence).
    size_t pos = prompt.size();
    for (size_t r = 0; r < input["rounds"].size(); ++r) {
      pos += input["rounds"][r]["accepted"].get<size_t>();
      require(same_bits(std::vector<float>(logits.data.begin() + std::ptrdiff_t(r * vocab),
                                           logits.data.begin() + std::ptrdiff_t((r + 1) * vocab)),
                        forward.data() + pos * vocab, vocab),
              "round " + std::to_string(r) + "'s logits equal Model::forward's of the accepted tokens");
      ++pos;
    }
    const json fresh = run_adapter("run_prefill", {{"weights", decode_weights_spec()}, {"chunks", json::array({json(seq)})}});
    require_same_cache(out["cache"], fresh, "the speculated cache equals a prefill of the accepted tokens");
    const json prompt_only =
        run_adapter("run_prefill", {{"weights", decode_weights_spec()}, {"chunks", json::array({json(prompt)})}});
    require_same_cache(out["prompt_cache"], prompt_only, "the prompt's cache is as the prefill left it");
    json expected = out;
    expected["logits"] = digest_logits(out["logits"]);
    expected["cache"] = digest_cache(out["cache"]);
    expected["prompt_cache"] = digest_cache(out["prompt_cache"]);
    return expected;
  };
  return {"rollback", std::move(name), std::move(checks), "run_speculative", input, finalize};
}

namespace {

json round(std::vector<int> draft, int accepted, int next) {
  return {{"draft", draft}, {"accepted", accepted}, {"next", next}};
}

}  // namespace

namespace stage_rollback {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(plan_case("01-crop-to-every-length",
                            "Clones of a 4-position cache cropped to 4, 3, 2, 1 and 0 keep exactly their "
                            "first positions; the original keeps all 4.",
                            CropPlan().create().append(0, 4).clone(0).crop(1, 4).clone(0).crop(2, 3).clone(0)
                                .crop(3, 2).clone(0).crop(4, 1).clone(0).crop(5, 0)));
  cases.push_back(plan_case("02-crop-then-append",
                            "Five appends, crop to 2, two more appends: the new rows are positions 2 and 3.",
                            CropPlan().create().append(0, 5).crop(0, 2).append(0, 2)));
  cases.push_back(plan_case("03-crop-a-clone",
                            "Cropping a clone and appending to both leaves the original's positions as they "
                            "were.",
                            CropPlan().create().append(0, 3).clone(0).crop(1, 1).append(1).append(0)));
  cases.push_back(plan_case("04-crop-twice",
                            "Twenty appends, crop to 7, three appends, crop to 9, two appends: every row is "
                            "where the last crop and appends put it.",
                            CropPlan().create().append(0, 20).crop(0, 7).append(0, 3).crop(0, 9).append(0, 2)));
  cases.push_back(plan_case("05-crop-beyond-the-length-throws",
                            "crop(4) on a cache of 3 positions throws std::out_of_range.",
                            CropPlan().create().append(0, 3).crop(0, 4), true));
  cases.push_back(plan_case("06-negative-crop-throws", "crop(-1) throws std::out_of_range.",
                            CropPlan().create().append(0, 2).crop(0, -1), true));

  const std::vector<int> prompt = {464, 2068, 7586, 21831, 18045};  // "The quick brown fox jumps"
  cases.push_back(
      speculative_case("07-all-drafts-accepted",
                       "Two drafts, both accepted, then the target's own token: the cache "
                       "holds the prompt, the drafts and that token.",
                       prompt, json::array({round({625, 262}, 2, 3290)})));
  cases.push_back(speculative_case("08-no-draft-accepted",
                                   "Two drafts, none accepted: the cache is as if they were never "
                                   "decoded, and the next token is position 5.",
                                   prompt, json::array({round({11, 13}, 0, 625)})));
  cases.push_back(
      speculative_case("09-three-rounds",
                       "Three rounds accepting 2 of 3, 0 of 2 and 1 of 1 drafts: each round's "
                       "logits equal a model that "
                       "never saw the rejected drafts.",
                       prompt,
                       json::array({round({625, 262, 3290}, 2, 16931), round({318, 922}, 0, 3290),
                                    round({13}, 1, 3290)})));
  // Every crop above names the cache created last; this one crops an older cache after a
  // newer clone exists (a crop routed to the newest cache passes all the others).
  cases.push_back(
      plan_case("10-crop-an-older-cache",
                "A 4-position cache is cloned, then the original (not the clone, created "
                "last) is cropped to 2: the clone keeps all 4 positions, and the next "
                "appends land at position 2 of the original and 4 of the clone.",
                CropPlan().create().append(0, 4).clone(0).crop(0, 2).append(0).append(1)));
  return cases;
}

}  // namespace stage_rollback

}  // namespace course
