// The localizers of stages rollback (speculation), paged-cache, prefix-cache and
// continuous-batching (stages/07-paged-cache/grader/localize.cpp), on the committed
// fixtures with outputs made by hand as the catalogue's mistakes give them. Each sentence
// checked here names the learner's own state (their tables, counts, steps, lengths), never
// the reference's alone. No runner, no model.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "judge/diagnose.hpp"
#include "judge/localize.hpp"
#include "test_support.hpp"
#include "wire/digest.hpp"

using testing_support::has;

using course::json;
using course::Tensor;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

course::Fixture fixture(const std::string& stage, const std::string& name) {
  return course::load_fixture(testing_support::source_dir() / "fixtures" / stage / name);
}

// ---- a speculative run of a small made-up cache -----------------------------------------

// A cache of `seq` positions whose rows are a function of (layer, head, pos, dim).
struct FakeCache {
  int seq;
  std::vector<float> keys, values;
  explicit FakeCache(int s) : seq(s), keys(size_t(12 * 12 * s * 64)), values(keys.size()) {
    for (int l = 0; l < 12; ++l)
      for (int h = 0; h < 12; ++h)
        for (int p = 0; p < s; ++p)
          for (int d = 0; d < 64; ++d) {
            const size_t i = size_t(((l * 12 + h) * s + p) * 64 + d);
            keys[i] = std::sin(float(l * 7 + h * 3 + p * 11 + d) * 0.37f);
            values[i] = std::cos(float(l * 5 + h * 13 + p * 17 + d) * 0.21f);
          }
  }
  float& key(int l, int h, int p, int d) { return keys[size_t(((l * 12 + h) * seq + p) * 64 + d)]; }
  json output() const {
    Tensor k{{12, 12, seq, 64}, {}, keys}, v{{12, 12, seq, 64}, {}, values};
    json rows = json::array();
    for (int l = 0; l < 12; ++l) rows.push_back({12, seq, 64});
    return {{"cache_shapes", rows},
            {"keys", course::tensor_to_json(k, course::TensorEncoding::base64)},
            {"values", course::tensor_to_json(v, course::TensorEncoding::base64)}};
  }
  json expected() const {
    json e = output();
    Tensor k{{12, 12, seq, 64}, {}, keys}, v{{12, 12, seq, 64}, {}, values};
    e["keys"] = course::make_digest(k, {0, 63}, false);
    e["values"] = course::make_digest(v, {0, 63}, false);
    return e;
  }
};

json logits(int rows, float offset) {
  Tensor t{{rows, 40}, {}, std::vector<float>(size_t(rows * 40))};
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = std::sin(float(i) * 1.3f + offset);
  return course::tensor_to_json(t, course::TensorEncoding::base64);
}

// A prompt of 3 tokens; round 0 drafts 3 and accepts 1, round 1 drafts 1 and accepts none:
// the cache keeps 3 + (1 + 1) + (0 + 1) = 6 positions.
course::Fixture speculative_fixture() {
  course::Fixture f;
  f.stage = "rollback";
  f.adapter = "run_speculative";
  f.input = {{"prompt", {464, 2068, 7586}},
             {"rounds",
              {{{"draft", {5, 6, 7}}, {"accepted", 1}, {"next", 9}},
               {{"draft", {4}}, {"accepted", 0}, {"next", 2}}}}};
  Tensor lg = course::tensor_from_json(logits(2, 0));
  f.expected = {{"prompt_cache", FakeCache(3).expected()},
                {"cache", FakeCache(6).expected()},
                {"logits", course::make_digest(lg, {0, 39}, true)}};
  f.expected["cache"]["logits"] = f.expected["logits"];
  return f;
}

}  // namespace

TEST(localize_speculative, a_cache_no_crop_shortened_is_read_in_rounds) {
  json out = {{"prompt_cache", FakeCache(3).output()},
              {"cache", FakeCache(9).output()},
              {"logits", logits(2, 0)}};
  std::string text = joined(course::localize(speculative_fixture(), out));
  // The learner's length (9) is in the sentence, and so is its reading in rounds.
  EXPECT_TRUE(
      has(text,
          "The speculating cache holds 9 positions in every layer; the prompt (3) and, per round, "
          "the accepted "
          "drafts and next make 6; 9 is what the rounds leave when no crop removes a draft"))
      << text;
}

TEST(localize_speculative, a_wrong_row_is_named_by_the_round_that_put_it_there) {
  FakeCache wrong(6);
  wrong.key(0, 2, 4, 0) += 1.0f;  // position 4: round 0's next token
  json out = {
      {"prompt_cache", FakeCache(3).output()}, {"cache", wrong.output()}, {"logits", logits(2, 0)}};
  out["cache"]["logits"] = out["logits"];
  std::string text = joined(course::localize(speculative_fixture(), out));
  EXPECT_TRUE(has(text,
                  "The speculating cache: the first wrong number is in layer 0's keys (head 2; its "
                  "values there are "
                  "right) at position 4."))
      << text;
  EXPECT_TRUE(has(text,
                  "Position 4 is round 0's next token (9), decoded after the crop to 4 (1 of 3 "
                  "drafts accepted)."))
      << text;
}

TEST(localize_speculative, a_prompt_cache_the_rounds_went_into_says_so) {
  json out = {{"prompt_cache", FakeCache(6).output()},
              {"cache", FakeCache(6).output()},
              {"logits", logits(2, 0)}};
  std::string text = joined(course::localize(speculative_fixture(), out));
  EXPECT_TRUE(has(text,
                  "The prompt's cache ends with the speculating cache's lengths (6 positions in "
                  "layer 0), where prefill "
                  "left 3."))
      << text;
}

TEST(localize_speculative, logits_that_are_another_rounds_say_so_bit_for_bit) {
  json out = {{"prompt_cache", FakeCache(3).output()}, {"cache", FakeCache(6).output()}};
  Tensor lg = course::tensor_from_json(logits(2, 0));
  std::copy(lg.data.begin() + 40, lg.data.end(),
            lg.data.begin());  // round 0 holds round 1's logits
  out["cache"]["logits"] = course::tensor_to_json(lg, course::TensorEncoding::base64);
  std::string text = joined(course::localize(speculative_fixture(), out));
  EXPECT_TRUE(has(text, "the first wrong number is in the logits of round 0's next token")) << text;
  EXPECT_TRUE(has(text,
                  "the logits of round 0's next token equal, bit for bit, the expected logits of "
                  "round 1's next token."))
      << text;
}

// ---- paged plans ---------------------------------------------------------------------------

TEST(localize_paged_plan, a_fork_that_writes_into_the_shared_block_names_the_copy_on_write_step) {
  const course::Fixture f = fixture("paged-cache", "04-fork-a-partial-block.json");
  json out = f.expected;  // as pg.no_copy_on_write leaves it
  out["sequences"][1]["block_table"] = {0};
  out["ref_counts"] = {2, 0, 0, 0};
  out["free_blocks"] = 3;
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "The earliest step whose result your final state does not show is step 7, which "
                  "appends #5 to "
                  "sequence 1 at position 5: its last block 0 is partly filled (5 of 16) and "
                  "shared, so it is copied "
                  "into block 1 (copy-on-write"))
      << text;
  // Each "At the end" figure is the learner's own.
  EXPECT_TRUE(has(text,
                  "At the end: sequence 1's block table is [0] (expected [1]); block 0's count is "
                  "2 (expected 1); "
                  "block 1's count is 0 (expected 1)."))
      << text;
}

TEST(localize_paged_plan, a_step_that_should_run_out_of_blocks) {
  const course::Fixture f = fixture("paged-cache", "07-pool-exhausted.json.gz");
  json out = f.expected;
  out["exhausted"] = json::array();
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "step 35, which appends #33 to sequence 0 at position 32: it needs 1 free block, "
                  "the pool has 0, so "
                  "it throws PoolExhausted and changes nothing. At the end: step 35 is not among "
                  "the steps your plan "
                  "reports as PoolExhausted."))
      << text;
}

TEST(localize_paged_plan, a_wrong_key_names_the_append_that_should_be_there_and_the_one_that_is) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  Tensor k = course::tensor_from_json(out["sequences"][0]["keys"]);
  k.data[size_t(2 * 64)] = 1.0f;  // head 0, pos 2, dim 0: append #0's key, head 0, dim 0
  out["sequences"][0]["keys"] = course::tensor_to_json(k, course::TensorEncoding::base64);
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "Every length, table and count is right. The earliest step whose keys or values "
                  "your final state "
                  "does not show is step 3, which appends #2 to sequence 0 at position 2: it "
                  "writes into block 0, "
                  "offset 2. Sequence 0's key at position 2 (block 0, offset 2), head 0, dim 0 "
                  "holds 1: append #0's "
                  "key, head 0, dim 0, where append #2's belongs."))
      << text;
}

// Issue 25: an append of several positions at once (one grow(n)) that needs the copy and
// a new block, in a pool with one free: as pg.grow_check_forgets_copy leaves the pool, the
// fork moved to its copy (block 1) though the step threw. The step that should have thrown
// is said with its figures, and the counts are the learner's.
TEST(localize_paged_plan, a_grow_of_several_positions_is_said_with_the_blocks_it_needs) {
  const course::Fixture f =
      fixture("paged-cache", "11-a-grow-that-needs-the-copy-and-a-block.json.gz");
  json out = f.expected;
  out["sequences"][1]["block_table"] = {1};
  out["ref_counts"] = {1, 1};
  out["free_blocks"] = 0;
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "At the end: sequence 1's block table is [1] (expected [0]); block 0's count is "
                  "1 (expected 2)."))
      << text;
  EXPECT_TRUE(has(text, "Also at the end: block 1's count is 1 (expected 0).")) << text;
  // The same plan with the step left out of the learner's exhausted list names it, with
  // what it needs.
  out = f.expected;
  out["exhausted"] = json::array();
  text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "step 3, which appends #5 .. #16 to sequence 1 (one grow(12)) at positions 5 .. "
                  "16: it needs 2 "
                  "free blocks, the pool has 1, so it throws PoolExhausted and changes nothing."))
      << text;
}

// The plan run again cut short (locate_paged_plan_divergence), with runs made up here as
// pg.grow_check_forgets_copy gives them: right after steps 0 .. 2, wrong with step 3. The
// halving asks for 2 then 3 steps, and names step 3, the grow, not the fork the final state
// points to.
TEST(locate_paged_plan_divergence, halving_names_the_step_after_which_the_runs_depart) {
  const course::Fixture f =
      fixture("paged-cache", "11-a-grow-that-needs-the-copy-and-a-block.json.gz");
  json wrong = f.expected;
  wrong["sequences"][1]["block_table"] = {1};
  wrong["ref_counts"] = {1, 1};
  wrong["free_blocks"] = 0;
  std::vector<size_t> asked;
  const course::PlanRunner run = [&](const json& input) -> std::optional<json> {
    const size_t steps = input["plan"].size();
    asked.push_back(steps);
    json out = f.expected;  // after 3 steps: sequence 0 and its fork, sharing block 0
    out["exhausted"] = json::array();
    if (steps == 2) {  // before the fork
      out["sequences"].erase(1);
      out["ref_counts"] = {1, 0};
    }
    return out;
  };
  const std::string text = joined(course::locate_paged_plan_divergence(f, wrong, run));
  EXPECT_EQ(asked, (std::vector<size_t>{2, 3}));
  EXPECT_TRUE(has(text,
                  "Run again on the plan cut short: after steps 0 .. 2 your code's state (lengths, "
                  "tables, counts, "
                  "rows) is the one the rules give; with step 3 too it is not. Step 3 appends #5 "
                  ".. #16 to sequence 1"))
      << text;
  // A run that gives no output ends it: nothing is said.
  const course::PlanRunner none = [](const json&) -> std::optional<json> { return std::nullopt; };
  EXPECT_TRUE(course::locate_paged_plan_divergence(f, wrong, none).empty());
  // An output the check sees as right is not located (nothing to say), and nothing is run.
  asked.clear();
  EXPECT_TRUE(course::locate_paged_plan_divergence(f, f.expected, run).empty());
  EXPECT_TRUE(asked.empty());
}

// A run whose rows differ (the tables and counts right) is not the rules' state: the rows
// are read as the input wrote them.
TEST(locate_paged_plan_divergence, a_wrong_row_in_a_run_counts) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json wrong = f.expected;
  Tensor k = course::tensor_from_json(wrong["sequences"][0]["keys"]);
  k.data[size_t(1 * 64)] = 7.0f;  // head 0, position 1
  wrong["sequences"][0]["keys"] = course::tensor_to_json(k, course::TensorEncoding::base64);
  const course::PlanRunner run = [&](const json& input) -> std::optional<json> {
    const size_t steps = input["plan"].size();  // create, then appends #0 .. #(steps - 2)
    json out = f.expected;
    const int length = int(steps) - 1;
    Tensor full = course::tensor_from_json(f.expected["sequences"][0]["keys"]);
    Tensor part{{12, length, 64}, {}, {}};
    for (int h = 0; h < 12; ++h)
      for (int p = 0; p < length; ++p)
        for (int d = 0; d < 64; ++d) part.data.push_back(full.data[size_t((h * 3 + p) * 64 + d)]);
    if (length >= 2) part.data[size_t(1 * 64)] = 7.0f;  // position 1 is wrong from its append on
    out["sequences"][0]["length"] = length;
    out["sequences"][0]["block_table"] = length ? json{0} : json::array();
    out["sequences"][0]["keys"] = course::tensor_to_json(part, course::TensorEncoding::base64);
    Tensor values = part;
    for (int h = 0; h < 12; ++h)
      for (int p = 0; p < length; ++p)
        for (int d = 0; d < 64; ++d)
          values.data[size_t((h * length + p) * 64 + d)] = -full.data[size_t((h * 3 + p) * 64 + d)];
    out["sequences"][0]["values"] = course::tensor_to_json(values, course::TensorEncoding::base64);
    out["ref_counts"] = {length ? 1 : 0, 0, 0, 0};
    out["free_blocks"] = length ? 3 : 4;
    return out;
  };
  const std::string text = joined(course::locate_paged_plan_divergence(f, wrong, run));
  EXPECT_TRUE(has(text,
                  "after steps 0 .. 1 your code's state (lengths, tables, counts, rows) is the one "
                  "the rules give; "
                  "with step 2 too it is not. Step 2 appends #1 to sequence 0 at position 1"))
      << text;
}

TEST(localize_paged_plan, a_free_block_count_that_disagrees_with_the_counts) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  out["free_blocks"] = 4;
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(
      text,
      "Every length, table and count is right, and 3 blocks have count 0; free_blocks() says 4."))
      << text;
}

TEST(localize_paged_plan, a_wrong_length_names_the_step_that_set_it) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  out["sequences"][0]["length"] = 4;
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "The earliest step whose result your final state does not show is step 3, which "
                  "appends #2 to "
                  "sequence 0 at position 2: it writes into block 0, offset 2. At the end: "
                  "sequence 0's length() is "
                  "4 (expected 3)."))
      << text;
}

TEST(localize_paged_plan, a_count_no_step_sets_is_said_at_the_end_only) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  out["ref_counts"][2] = 1;  // block 2: no step of the plan touches it
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text, "At the end: block 2's count is 1 (expected 0).")) << text;
  EXPECT_FALSE(has(text, "The earliest step")) << text;
}

TEST(localize_paged_plan, a_step_reported_exhausted_that_is_not) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  out["exhausted"] = {2};
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text, "At the end: step 2 threw PoolExhausted in your run.")) << text;
}

TEST(localize_paged_plan, later_steps_that_differ_are_listed) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  out["sequences"][0]["length"] = 4;  // set by step 3
  out["exhausted"] = {1};             // step 1 reported exhausted
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text, "The earliest step whose result your final state does not show is step 1,"))
      << text;
  EXPECT_TRUE(has(text, "Later steps whose results differ too: 3.")) << text;
}

TEST(localize_paged_plan, a_missing_sequence_stops_the_reading) {
  const course::Fixture f = fixture("paged-cache", "03-fork-a-full-block.json.gz");
  json out = f.expected;
  out["sequences"].erase(1);
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(
      has(text, "The output has 1 sequence; 2 are expected. Nothing more is read from them."))
      << text;
}

TEST(localize_paged_plan, keys_of_the_wrong_shape_are_said_so) {
  const course::Fixture f = fixture("paged-cache", "01-one-block.json");
  json out = f.expected;
  Tensor k{{12, 2, 64}, {}, std::vector<float>(12 * 2 * 64, 1.0f)};
  out["sequences"][0]["keys"] = course::tensor_to_json(k, course::TensorEncoding::base64);
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text, "sequence 0's keys are [12, 2, 64], expected [12, 3, 64].")) << text;
}

// A fixture whose expected state the judge's replay does not give: no step is named.
TEST(localize_paged_plan, no_step_is_named_when_the_replay_does_not_give_the_expected_state) {
  course::Fixture f = fixture("paged-cache", "01-one-block.json");
  f.expected["ref_counts"] = {2, 0, 0, 0};
  json out = f.expected;
  out["sequences"][0]["length"] = 4;
  std::string text = joined(course::localize(f, out));
  EXPECT_FALSE(has(text, "step")) << text;
  EXPECT_TRUE(
      has(joined(course::localize(fixture("paged-cache", "01-one-block.json"), json::array())),
          "The output is not an object."));
}

// ---- prefix-cache traces ---------------------------------------------------------------------

TEST(localize_prefix_trace, keys_are_named_by_the_prompt_block_they_hash) {
  const course::Fixture f = fixture("prefix-cache", "02-shared-prefix.json");
  json out = f.expected;
  for (json& r : out["requests"]) r.erase("logits");
  // As pc.key_without_parent leaves it: block 1's key hashes its tokens alone.
  out["entries"][1]["key"] = "4e0350723dc4b16f";
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "At the end, your cache does not hold \"98350b6fc388762c\" (the key of prompt "
                  "0's block 1 (tokens "
                  "16 .. 31), block 1, last_used 2)."))
      << text;
  EXPECT_TRUE(has(
      text,
      "At the end, your cache holds \"4e0350723dc4b16f\" (block_key(root_key, its tokens) of "
      "prompt 0's "
      "block 1 (tokens 16 .. 31): that block's tokens alone, without its parent's key), which the "
      "reference's does not."))
      << text;
}

TEST(localize_prefix_trace, the_first_eviction_that_differs) {
  const course::Fixture f = fixture("prefix-cache", "05-evict-least-recently-used.json");
  json out = f.expected;
  out["evicted"][0] = "5d87012f52321228";
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(
      text,
      "Evictions: eviction 0 is \"5d87012f52321228\" (the key of prompt 0's block 0 (tokens 0 .. "
      "15)) "
      "where \"b6d39e2bdb21eb0a\" (the key of prompt 1's block 1 (tokens 16 .. 31)) is expected."))
      << text;
}

// ---- the server loop ---------------------------------------------------------------------------

TEST(localize_serve, an_admission_the_rule_refuses_is_said_with_its_figures) {
  const course::Fixture f = fixture("continuous-batching", "04-waiting-for-blocks.json");
  json out = f.expected;
  out["steps"][0]["prefilled"] = {0, 1, 2};  // as cb.admit_by_free_blocks_only admits
  out["steps"][0]["free_blocks"] = 0;
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "Step 0 is the first whose log differs: prefilled [0, 1, 2] where [0, 1] is "
                  "expected; free_blocks 0 "
                  "where 1 is expected at the end of the step."))
      << text;
  // 3 prompt + 2 new - 1 = 4 positions: request 2's own figures from the input.
  EXPECT_TRUE(has(text,
                  "By the rules of batching.hpp, your loop admits request 2: request 2 needs 3 "
                  "prompt + 2 new - 1 = "
                  "4 positions, 1 block; 3 free at the start of the step, minus 3 for the "
                  "requests admitted before it "
                  "at this step leaves 0: it does not fit."))
      << text;
}

TEST(localize_serve, a_step_after_every_request_retired) {
  const course::Fixture f = fixture("continuous-batching", "01-one-request.json");
  json out = f.expected;
  out["steps"].push_back({{"prefilled", json::array()}, {"decoded", {0}}, {"free_blocks", 8}});
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "Your loop runs 4 steps where 3 are expected. Steps 0 .. 2 are as expected. "
                  "Every request has "
                  "retired by the end of step 2 (request 0 at step 2)"))
      << text;
  EXPECT_TRUE(
      has(text, "your step 3 has {\"decoded\": [0], \"free_blocks\": 8, \"prefilled\": []}"))
      << text;
}

TEST(localize_serve, blocks_not_given_back_name_the_retirement) {
  const course::Fixture f = fixture("continuous-batching", "01-one-request.json");
  json out = f.expected;
  out["steps"][2]["free_blocks"] = 7;  // as cb.retire_without_release leaves the pool
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "Step 2 is the first whose log differs: free_blocks 7 where 8 is expected at the "
                  "end of the step. "
                  "Steps 0 .. 1 are as expected."))
      << text;
  EXPECT_TRUE(has(text,
                  "request 0 retires, now that it has its 3 tokens (max_new_tokens), and gives "
                  "back its blocks."))
      << text;
}

// ---- a GPT-2 prompt forked into branches ------------------------------------------------------

TEST(localize_paged_fork, a_branch_that_writes_into_the_prompts_block_names_its_decode_step) {
  const course::Fixture f = fixture("paged-cache", "09-gpt2-two-branches.json.gz");
  json out = f.expected;  // the tables and counts are all that is read before the numbers
  out["branches"][0]["block_table"] = {0, 1};  // as pg.no_copy_on_write leaves branch 0
  std::string text = joined(course::localize(f, out));
  EXPECT_TRUE(has(text,
                  "The earliest step whose result your final state does not show is step 3, which "
                  "runs branch 0's "
                  "decode step 0 (token 318) at position 15: its last block 0 is partly filled (15 "
                  "of 16) and shared, "
                  "so it is copied into block 1 (copy-on-write"))
      << text;
  EXPECT_TRUE(has(text, "At the end: branch 0's block table is [0, 1] (expected [1, 2]).")) << text;
}
