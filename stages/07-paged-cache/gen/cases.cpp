// Cases of stage paged-cache.
//
//  * Plans on a one-layer pool (adapter run_paged_plan) with stage 1's self-describing rows:
//    the report can say which append's row a position holds, so a row written into the
//    wrong block, or into a block another sequence shares, explains itself. The expected
//    tables follow from the rule that allocate() hands out the lowest free block.
//  * GPT-2 small forks (adapter run_paged_fork). The generator proves that every branch's
//    logits equal Model::forward's of prompt + branch, and that its keys and values equal a
//    contiguous prefill's.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"

namespace course {

namespace {

class PagedPlan {
 public:
  explicit PagedPlan(int n_blocks) : n_blocks_(n_blocks) {}
  PagedPlan& create() { return step({{"op", "create"}}); }
  PagedPlan& append(int sequence, int times = 1) {
    for (int t = 0; t < times; ++t) {
      json op = describing_row(next_append_++);
      op["op"] = "append";
      op["sequence"] = sequence;
      step(std::move(op));
    }
    return *this;
  }
  // One append of n positions: the adapter calls grow(n) once, then writes the n rows.
  PagedPlan& grow(int sequence, int n) {
    json op = describing_rows(next_append_, n);
    next_append_ += n;
    op["op"] = "append";
    op["sequence"] = sequence;
    op["n"] = n;
    return step(std::move(op));
  }
  PagedPlan& fork(int sequence) { return step({{"op", "fork"}, {"sequence", sequence}}); }
  PagedPlan& release(int sequence) { return step({{"op", "release"}, {"sequence", sequence}}); }
  json input() const { return {{"n_blocks", n_blocks_}, {"plan", plan_}}; }

 private:
  PagedPlan& step(json op) {
    plan_.push_back(std::move(op));
    return *this;
  }
  int n_blocks_;
  json plan_ = json::array();
  int next_append_ = 0;
};

CaseSpec plan_case(std::string name, std::string checks, const PagedPlan& plan) {
  return {"paged-cache", std::move(name), std::move(checks), "run_paged_plan", plan.input(), nullptr};
}

}  // namespace

CaseSpec fork_case(std::string name, std::string checks, int n_blocks, std::vector<int> prompt,
                   std::vector<std::vector<int>> branches) {
  json input = {{"weights", decode_weights_spec()}, {"n_blocks", n_blocks}, {"prompt", prompt}, {"branches", branches}};
  auto finalize = [prompt, branches](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    const std::vector<float> fp = model.forward(prompt);
    require(same_bits(tensor_from_json(out["prompt_logits"]).data, fp.data() + fp.size() - vocab, vocab),
            "the paged prompt's logits equal Model::forward's");
    json expected = out;
    expected["prompt_logits"] = digest_logits(out["prompt_logits"]);
    for (size_t b = 0; b < branches.size(); ++b) {
      const std::vector<int> all = concat(prompt, branches[b]);
      const std::vector<float> f = model.forward(all);  // [all, vocab]
      const json& got = out["branches"][b];
      const size_t steps = branches[b].size();
      require(same_bits(tensor_from_json(got["logits"]).data, f.data() + prompt.size() * vocab, steps * vocab),
              "branch " + std::to_string(b) + "'s logits equal Model::forward's of prompt + branch");
      const json fresh = run_adapter("run_prefill", {{"weights", decode_weights_spec()}, {"chunks", json::array({json(all)})}});
      for (const char* name : {"keys", "values"}) {
        const Tensor x = tensor_from_json(got[name]), y = tensor_from_json(fresh[name]);
        require(x.shape == y.shape && same_bits(x.data, y.data.data(), y.data.size()),
                "branch " + std::to_string(b) + "'s paged " + name + " equal a contiguous prefill's");
      }
      expected["branches"][b] = digest_cache(got);
    }
    return expected;
  };
  return {"paged-cache", std::move(name), std::move(checks), "run_paged_fork", input, finalize};
}

namespace stage_paged_cache {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  cases.push_back(plan_case("01-one-block", "Three appends take one block (the lowest, 0) and fill its first rows.",
                            PagedPlan(4).create().append(0, 3)));
  cases.push_back(plan_case("02-across-the-boundary",
                            "Seventeen appends: positions 0 to 15 fill block 0, position 16 opens block 1.",
                            PagedPlan(4).create().append(0, 17)));
  cases.push_back(plan_case("03-fork-a-full-block",
                            "A fork of a 16-position sequence shares its full block (count 2); each side's "
                            "next position opens a block of its own.",
                            PagedPlan(4).create().append(0, 16).fork(0).append(1, 2).append(0)));
  cases.push_back(plan_case("04-fork-a-partial-block",
                            "A fork of a 5-position sequence: the fork's first append copies the shared, "
                            "partly filled block (copy-on-write), and neither side sees the other's rows.",
                            PagedPlan(4).create().append(0, 5).fork(0).append(1, 2).append(0, 2)));
  cases.push_back(plan_case("05-release-everything",
                            "Releasing a sequence and its fork frees every block; a new sequence then gets "
                            "block 0 again.",
                            PagedPlan(4).create().append(0, 20).fork(0).append(1).release(0).release(1).create()
                                .append(2, 3)));
  cases.push_back(plan_case("06-release-one-side",
                            "Releasing the original of a fork leaves the fork's blocks alive (count 1), and "
                            "a new sequence gets only the blocks that became free.",
                            PagedPlan(6).create().append(0, 18).fork(0).append(1).release(0).create()
                                .append(2, 2)));
  cases.push_back(plan_case("07-pool-exhausted",
                            "A pool of 3 blocks: the appends that need a fourth block fail and change "
                            "nothing; the others go on.",
                            PagedPlan(3).create().append(0, 20).fork(0).append(1).append(0, 12).append(0)
                                .append(1).release(1).append(0)));
  cases.push_back(plan_case("08-tables-that-are-not-contiguous",
                            "Two sequences growing in turn get interleaved blocks: position 16 of the first "
                            "is in block 2, not block 1.",
                            PagedPlan(6).create().create().append(0, 16).append(1).append(0, 3).append(1, 16)
                                .append(0)));

  // The copy-on-write block counts in grow's all-or-nothing check: a fork of 5 positions
  // growing by 12 at once needs a copy of its shared block 0 and a new block for position
  // 16, two blocks where the pool has one free. A grow(1) never needs both.
  cases.push_back(
      plan_case("11-a-grow-that-needs-the-copy-and-a-block",
                "A fork of a 5-position sequence grows by 12 at once in a pool one block short: "
                "it needs a copy of the shared block and a new block, so it throws "
                "PoolExhausted and takes neither.",
                PagedPlan(2).create().grow(0, 5).fork(0).grow(1, 12)));

  const std::vector<int> prompt = {464, 2068, 7586, 21831, 18045, 625, 262, 16931,
                                   3290, 13,   383,  3290,  318,   922};  // 14 tokens
  cases.push_back(
      fork_case("09-gpt2-two-branches",
                "A 15-token prompt forked into branches of 2 and 3 tokens: both cross into a "
                "second block, and each equals Model::forward of prompt + branch.",
                16, concat(prompt, {13}), {{318, 257}, {632, 318, 3290}}));
  cases.push_back(fork_case("10-gpt2-prompt-of-two-blocks",
                            "An 18-token prompt (one full block shared for good, one partly filled) and "
                            "three one- and two-token branches.",
                            16, concat(prompt, {13, 383, 3290, 318}), {{922}, {257, 13}, {3290}}));
  return cases;
}

}  // namespace stage_paged_cache

}  // namespace course
