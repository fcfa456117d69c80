// The localizers of stages rollback (speculation), paged-cache, prefix-cache and
// continuous-batching (stages/07-paged-cache/grader/localize.cpp), on the committed
// fixtures with outputs made by hand as the catalogue's mistakes give them. Each sentence
// checked here names the learner's own state (their tables, counts, steps, lengths), never
// the reference's alone. No runner, no model.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "judge/diagnose.hpp"
#include "test_support.hpp"
#include "wire/digest.hpp"

using course::json;
using course::Tensor;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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
