// Diagnoses on hand-made outputs: the whole-output digest, identification (a mistake is
// named only when it agrees with every graded case), localization (what is observed, in
// computation order) and the work findings. No runner, no model.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "judge/diagnose.hpp"
#include "judge/localize.hpp"
#include "wire/digest.hpp"

using course::json;
using course::Tensor;

namespace {

json tensor(std::vector<int64_t> shape, const std::function<float(size_t)>& value) {
  Tensor t;
  t.shape = std::move(shape);
  t.data.resize(size_t(t.numel()));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = value(i);
  return course::tensor_to_json(t, course::TensorEncoding::base64);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- stage 1: a plan of one cache and three appends, with the self-describing values --

float key_value(int append, int head, int dim) { return float(append * 768 + head * 64 + dim + 1); }

json append_op(int a) {
  return {{"op", "append"},
          {"cache", 0},
          {"k", tensor({768}, [a](size_t i) { return float(a * 768 + int(i) + 1); })},
          {"v", tensor({768}, [a](size_t i) { return -float(a * 768 + int(i) + 1); })}};
}

// The snapshot [12, 3, 64] whose key(h, p) row is key_row(h, p)'s (append, head) band.
json snapshot(const std::function<std::pair<int, int>(int, int)>& key_row, bool swap_kv = false) {
  auto fill = [&](bool key) {
    return tensor({12, 3, 64}, [&, key](size_t i) {
      const int h = int(i / (3 * 64)), p = int(i / 64 % 3), d = int(i % 64);
      auto [a, hh] = key_row(h, p);
      const float x = key_value(a, hh, d);
      return key != swap_kv ? x : -x;
    });
  };
  return {{"shape", {12, 3, 64}}, {"keys", fill(true)}, {"values", fill(false)}};
}

course::Fixture plan_fixture() {
  course::Fixture f;
  f.stage = "cache-structure";
  f.adapter = "run_cache_plan";
  f.input = {{"plan", {{{"op", "create"}}, append_op(0), append_op(1), append_op(2)}}};
  f.expected = {{"caches", {snapshot([](int h, int p) { return std::pair{p, h}; })}}};
  return f;
}

}  // namespace

// ---- output digests ----------------------------------------------------------------------

TEST(output_digest, covers_what_the_fixture_expects_bits_and_shapes) {
  json expected = {{"x", tensor({2, 3}, [](size_t i) { return float(i); })}, {"n", 3}};
  json same = {{"x", tensor({2, 3}, [](size_t i) { return float(i); })}, {"n", 3}, {"extra", 1}};
  const std::string d = course::output_digest(expected, same);
  EXPECT_EQ(d.size(), 16u);
  EXPECT_EQ(d, course::output_digest(expected, expected)) << "keys only the output has are not looked at";
  // -0 hashes as +0 (the comparison treats them as equal); NaN as one NaN.
  json zero = {{"x", tensor({1}, [](size_t) { return 0.0f; })}};
  json minus = {{"x", tensor({1}, [](size_t) { return -0.0f; })}};
  EXPECT_EQ(course::output_digest(zero, zero), course::output_digest(zero, minus));
  json nan1 = {{"x", tensor({1}, [](size_t) { return std::nanf("1"); })}};
  json nan2 = {{"x", tensor({1}, [](size_t) { return -std::nanf("2"); })}};
  EXPECT_EQ(course::output_digest(zero, nan1), course::output_digest(zero, nan2));
  EXPECT_NE(course::output_digest(zero, zero), course::output_digest(zero, nan1));
  // One bit, a shape, an integer or a missing key changes it.
  json one_ulp = {{"x", tensor({2, 3}, [](size_t i) { return i == 5 ? std::nextafter(5.0f, 9.0f) : float(i); })},
                  {"n", 3}};
  json reshaped = {{"x", tensor({3, 2}, [](size_t i) { return float(i); })}, {"n", 3}};
  json other_n = {{"x", tensor({2, 3}, [](size_t i) { return float(i); })}, {"n", 4}};
  json missing = {{"x", tensor({2, 3}, [](size_t i) { return float(i); })}};
  for (const json& a : {one_ulp, reshaped, other_n, missing}) EXPECT_NE(course::output_digest(expected, a), d) << a.dump();
}

// ---- identification --------------------------------------------------------------------------

TEST(identify, names_a_mistake_only_when_it_agrees_on_every_case) {
  course::Fixture a, b;
  a.mistakes = {{"kvc.kv_swapped", "", "00000000000000aa"}, {"kvc.transposed_layout", "", "00000000000000aa"},
                {"kvc.rows_reversed", "", "passes"}};
  b.mistakes = {{"kvc.kv_swapped", "", "passes"}, {"kvc.transposed_layout", "", "00000000000000bb"},
                {"kvc.rows_reversed", "", "00000000000000cc"}};
  // Learner fails a (digest aa) and passes b: only kv_swapped agrees on both.
  auto named = course::identify({{&a, false, "00000000000000aa"}, {&b, true, ""}});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].id, "kvc.kv_swapped");
  // Graded on case a alone, two mistakes agree: both are named.
  EXPECT_EQ(course::identify({{&a, false, "00000000000000aa"}}).size(), 2u);
  // A mistake that passes a case the learner fails does not agree.
  EXPECT_TRUE(course::identify({{&a, false, "00000000000000aa"}, {&b, false, "00000000000000dd"}}).empty());
  // A case without an output (crash, exception) agrees with nothing; a pass needs no name.
  EXPECT_TRUE(course::identify({{&a, false, ""}}).empty());
  EXPECT_TRUE(course::identify({{&b, true, ""}}).empty());
}

// A random case (grader --random) has no records: it neither names a mistake nor rules one
// out, and failing only such cases names nothing.
TEST(identify, cases_without_records_never_name_a_mistake) {
  course::Fixture a, fresh;
  a.mistakes = {{"kvc.kv_swapped", "", "00000000000000aa"}, {"kvc.rows_reversed", "", "passes"}};
  // Fails a random case only (any digest, or none: a crash): nothing is named.
  EXPECT_TRUE(course::identify({{&fresh, false, "00000000000000aa"}}).empty());
  EXPECT_TRUE(course::identify({{&a, true, ""}, {&fresh, false, "00000000000000aa"}}).empty());
  EXPECT_TRUE(course::identify({{&a, true, ""}, {&fresh, false, ""}}).empty());
  // Fails a recorded case like kv_swapped and a random one: named from the recorded case
  // alone, whatever the random case gave.
  for (const char* digest : {"00000000000000aa", "00000000000000ff", ""}) {
    auto named = course::identify({{&a, false, "00000000000000aa"}, {&fresh, false, digest}});
    ASSERT_EQ(named.size(), 1u) << digest;
    EXPECT_EQ(named[0].id, "kvc.kv_swapped");
  }
  // The recorded case still rules out: a digest no mistake gave names nothing.
  EXPECT_TRUE(course::identify({{&a, false, "00000000000000bb"}, {&fresh, false, "00000000000000aa"}}).empty());
}

TEST(identify, the_parameter_is_part_of_the_name) {
  course::Fixture a;
  a.mistakes = {{"dec.wrong_scale", "1/sqrt(768)", "00000000000000aa"}, {"dec.wrong_scale", "1 (no scale)", "00000000000000bb"}};
  auto named = course::identify({{&a, false, "00000000000000aa"}});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].parameter, "1/sqrt(768)");
  EXPECT_TRUE(has(named[0].title, "1/sqrt(768)")) << named[0].title;
  EXPECT_TRUE(has(named[0].explanation, "multiplied by 1/sqrt(768) instead of")) << named[0].explanation;
}

TEST(identify, every_catalogue_entry_has_its_texts_and_a_lesson) {
  for (const auto& m : course::known_mistakes()) {
    EXPECT_FALSE(std::string(m.title).empty()) << m.id;
    EXPECT_FALSE(std::string(m.explanation).empty()) << m.id;
    EXPECT_TRUE(has(m.lesson, "lesson.md#mistake-")) << m.id;
  }
}

// ---- localization: stage 1's self-describing values -------------------------------------

TEST(localize, a_band_from_another_head_is_named_as_such) {
  // key(h, p) holds head h+1's band where h < 11 at pos 2: the heads' bands are crossed.
  json actual = {{"caches", {snapshot([](int h, int p) { return std::pair{p, p == 2 && h == 0 ? 1 : h}; })}}};
  std::string text = joined(course::localize(plan_fixture(), actual));
  EXPECT_TRUE(has(text, "your snapshot's keys[head 0, pos 2] holds append #2's key, head 1: head 1's band where head 0's belongs"))
      << text;
  EXPECT_TRUE(has(text, "The 2 rows before it in [head, pos] order are right")) << text;
}

TEST(localize, a_row_from_another_append_names_the_append) {
  json actual = {{"caches", {snapshot([](int h, int p) { return std::pair{2 - p, h}; })}}};
  std::string text = joined(course::localize(plan_fixture(), actual));
  EXPECT_TRUE(has(text, "your snapshot's keys[head 0, pos 0] holds append #2's key, head 0 where append #0's key, head 0 belongs "
                        "(append #2 is this cache's position 2)"))
      << text;
}

TEST(localize, keys_where_values_belong) {
  json actual = {{"caches", {snapshot([](int h, int p) { return std::pair{p, h}; }, true)}}};
  std::string text = joined(course::localize(plan_fixture(), actual));
  EXPECT_TRUE(has(text, "your snapshot's keys[head 0, pos 0] holds append #0's value, head 0: this is the value, not the key"))
      << text;
  EXPECT_TRUE(has(text, "your snapshot's values[head 0, pos 0] holds append #0's key, head 0: this is the key, not the value"))
      << text;
}

// Issue 25: a learner whose value() is right, and whose adapter builds the snapshot's
// values from key(). The plan's snapshot is the adapter's, so the sentence names the
// snapshot, never value(); read by the grader itself (read_kvcache) the same cache passes.
TEST(localize, a_snapshot_whose_values_come_from_keys_names_the_snapshot_not_value) {
  json snap = snapshot([](int h, int p) { return std::pair{p, h}; });
  snap["values"] = snap["keys"];  // the adapter's bug: values read through key(h, p)
  std::string text = joined(course::localize(plan_fixture(), {{"caches", {snap}}}));
  EXPECT_TRUE(has(text, "Cache 0: keys: all right.")) << text;
  EXPECT_TRUE(has(text, "your snapshot's values[head 0, pos 0] holds append #0's key, head 0: this is the key, not the value"))
      << text;
  EXPECT_FALSE(has(text, "value(0, 0)")) << text;
  course::Fixture read = plan_fixture();
  read.adapter = "read_kvcache";
  read.input = json::object();
  read.expected = snapshot([](int h, int p) { return std::pair{p, h}; });
  json values_from_keys = read.expected;
  values_from_keys["values"] = values_from_keys["keys"];
  std::string direct = joined(course::localize(read, values_from_keys));
  EXPECT_TRUE(has(direct, "value(0, 0) holds append #0's key, head 0: this is the key, not the value")) << direct;
}

// Issue 25: rows a crop removed were held by the cache; the sentence says so, with the crop.
TEST(localize, a_row_a_crop_removed_is_named_with_the_crop) {
  course::Fixture f = plan_fixture();
  f.stage = "rollback";
  f.input["plan"].push_back({{"op", "crop"}, {"cache", 0}, {"n", 1}});  // step 4: keeps append #0
  json a3 = append_op(3);
  f.input["plan"].push_back(a3);  // step 5: append #3 at position 1
  auto expected_rows = [](int h, int p) { return std::pair{p == 0 ? 0 : 3, h}; };
  auto fill = [](const std::function<std::pair<int, int>(int, int)>& row) {
    json t = tensor({12, 2, 64}, [&](size_t i) {
      const int h = int(i / (2 * 64)), p = int(i / 64 % 2), d = int(i % 64);
      auto [a, hh] = row(h, p);
      return key_value(a, hh, d);
    });
    json v = tensor({12, 2, 64}, [&](size_t i) {
      const int h = int(i / (2 * 64)), p = int(i / 64 % 2), d = int(i % 64);
      auto [a, hh] = row(h, p);
      return -key_value(a, hh, d);
    });
    return json{{"shape", {12, 2, 64}}, {"keys", t}, {"values", v}};
  };
  f.expected = {{"caches", {fill(expected_rows)}}};
  // The crop kept the stale row: position 1 still holds append #1.
  json actual = {{"caches", {fill([](int h, int p) { return std::pair{p, h}; })}}};
  std::string text = joined(course::localize(f, actual));
  EXPECT_TRUE(has(text, "holds append #1's key, head 0 where append #3's key, head 0 belongs (append #1 was this cache's "
                        "position 1; the crop at step 4 should have removed it)"))
      << text;
  EXPECT_FALSE(has(text, "never held")) << text;
}

TEST(localize, a_shape_row_out_of_order_stops_the_reading) {
  json snap = snapshot([](int h, int p) { return std::pair{p, h}; });
  snap["shape"] = {3, 12, 64};
  std::string text = joined(course::localize(plan_fixture(), {{"caches", {snap}}}));
  EXPECT_TRUE(has(text, "its shape [3, 12, 64] is not a shape row [12, length, 64]")) << text;
  EXPECT_TRUE(has(text, "Nothing more is read")) << text;
  EXPECT_FALSE(has(text, "key(")) << text;
}

// ---- localization: a GPT-2 run, in computation order -----------------------------------

namespace {

// A decode run of `seq` tokens: 12 layers x 12 heads x seq x 64 of K and V, logits of 40.
struct FakeRun {
  int seq;
  std::vector<float> keys, values, logits;
  explicit FakeRun(int s)
      : seq(s), keys(size_t(12 * 12 * s * 64)), values(keys.size()), logits(size_t(s * 40)) {
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = std::sin(float(i) * 0.37f), values[i] = std::cos(float(i) * 0.21f);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(float(i) * 1.3f);
  }
  float& key(int l, int h, int p, int d) { return keys[size_t(((l * 12 + h) * seq + p) * 64 + d)]; }
  json output(std::vector<int64_t> qkv_rows = {}) const {
    Tensor k{{12, 12, seq, 64}, {}, keys}, v{{12, 12, seq, 64}, {}, values}, lg{{seq, 40}, {}, logits};
    json rows = json::array();
    for (int l = 0; l < 12; ++l) rows.push_back({12, seq, 64});
    if (qkv_rows.empty()) qkv_rows.assign(12, seq);
    return {{"cache_shapes", rows},
            {"keys", course::tensor_to_json(k, course::TensorEncoding::base64)},
            {"values", course::tensor_to_json(v, course::TensorEncoding::base64)},
            {"logits", course::tensor_to_json(lg, course::TensorEncoding::base64)},
            {"work", {{"qkv_rows", qkv_rows}, {"finish_block_rows", qkv_rows}, {"forward_tokens", 0}, {"embed_rows", seq}}}};
  }
  course::Fixture fixture() const {
    course::Fixture f;
    f.stage = "one-token";
    f.adapter = "run_decode";
    f.input = {{"tokens", std::vector<int>(size_t(seq), 7)}};
    json out = output();
    f.expected = out;
    f.expected.erase("work");
    f.expected["work"] = {{"qkv_rows", out["work"]["qkv_rows"]},
                          {"finish_block_rows", out["work"]["finish_block_rows"]},
                          {"forward_tokens", 0}};
    Tensor k{{12, 12, seq, 64}, {}, keys}, v{{12, 12, seq, 64}, {}, values}, lg{{seq, 40}, {}, logits};
    f.expected["keys"] = course::make_digest(k, {0, 63}, false);
    f.expected["values"] = course::make_digest(v, {0, 63}, false);
    f.expected["logits"] = course::make_digest(lg, {0, 39}, true);
    return f;
  }
};

}  // namespace

TEST(localize, the_first_wrong_row_in_computation_order_and_what_lies_before_it) {
  FakeRun right(3);
  FakeRun wrong = right;
  wrong.key(1, 4, 1, 0) += 1.0f;  // layer 1, head 4, position 1
  wrong.key(5, 0, 2, 0) += 1.0f;  // later in computation order
  std::string text = joined(course::localize(right.fixture(), wrong.output()));
  EXPECT_TRUE(has(text, "the first wrong number is in layer 1's keys (head 4; its values there are right) at position 1"))
      << text;
  EXPECT_TRUE(has(text, "Right before it: every layer at position 0, and the logits computed there; layer 0 at position 1."))
      << text;
  EXPECT_TRUE(has(text, "Between them: layer 0's attention at position 1 (attend_one) and its finish_block")) << text;
  EXPECT_TRUE(has(text, "2 of 432 key rows and 0 of 432 value rows differ")) << text;
}

TEST(localize, layer_0_says_it_depends_on_the_token_and_position_alone) {
  FakeRun right(2);
  FakeRun wrong = right;
  wrong.key(0, 0, 1, 3) = NAN;
  std::string text = joined(course::localize(right.fixture(), wrong.output()));
  EXPECT_TRUE(has(text, "layer 0's keys (head 0; its values there are right) at position 1 (some are NaN)")) << text;
  EXPECT_TRUE(has(text, "model.embed of the token at position 1")) << text;
}

TEST(localize, logits_after_a_right_cache) {
  FakeRun right(2);
  FakeRun wrong = right;
  wrong.logits[45] += 1.0f;  // step 1
  std::string text = joined(course::localize(right.fixture(), wrong.output()));
  EXPECT_TRUE(has(text, "every cached key and value is right; the first wrong number is in the logits of step 1")) << text;
}

TEST(localize, shape_rows_come_first_and_stop_the_reading) {
  FakeRun right(2);
  json out = right.output();
  out["cache_shapes"][3] = {12, 64, 2};
  std::string text = joined(course::localize(right.fixture(), out));
  EXPECT_TRUE(has(text, "row 3 (layer 3) [12, 64, 2] is not a shape row [12, length, 64]")) << text;
  EXPECT_FALSE(has(text, "first wrong number")) << text;
}

// ---- work ------------------------------------------------------------------------------------

TEST(work, rows_redone_are_counted_and_a_pass_says_what_was_saved) {
  FakeRun right(3);
  std::string text = joined(course::localize(right.fixture(), right.output(std::vector<int64_t>(12, 9))));
  EXPECT_TRUE(has(text, "Work: qkv and finish_block each took 9 rows in every layer, 6 more than the positions your cache "
                        "holds (3): 6 rows were computed that your cache does not keep (computed again, or thrown away)."))
      << text;
  json forward = right.output();
  forward["work"]["forward_tokens"] = 6;
  EXPECT_TRUE(has(joined(course::localize(right.fixture(), forward)), "Model::forward ran on 6 tokens"));
  EXPECT_EQ(course::work_note(right.fixture(), right.output()),
            "work: each layer took 3 rows, one per token; without a cache, step t would recompute all t + 1 "
            "positions: 6 rows per layer");
}

// Issues 22 and 25: the work line reads the learner's own state. A run whose cache holds
// one position too many, each computed once, is not told that rows were recomputed.
TEST(work, rows_that_match_the_learners_own_cache_are_not_called_recomputed) {
  FakeRun right(3), longer(4);
  std::string text = joined(course::localize(right.fixture(), longer.output()));
  EXPECT_TRUE(has(text, "Work: qkv and finish_block each took 4 rows in every layer, one per position your cache holds (4); "
                        "the call has 3 new positions (3 tokens): your cache holds 1 position more than expected, and the "
                        "rows match what it holds."))
      << text;
  EXPECT_FALSE(has(text, "again")) << text;
}

// A prefix-cache trace is read against the learner's own cached_tokens: fewer hits are
// more rows, none of them recomputed; more hits are fewer rows, none skipped.
TEST(work, a_prefix_trace_is_read_against_the_learners_own_hits) {
  course::Fixture f;
  f.stage = "prefix-cache";
  f.adapter = "run_prefix_trace";
  f.input = {{"n_blocks", 8}, {"prompts", {std::vector<int>(20, 5), std::vector<int>(20, 5)}}};
  auto work = [](int rows) {
    return json{{"qkv_rows", std::vector<int>(12, rows)}, {"finish_block_rows", std::vector<int>(12, rows)}, {"forward_tokens", 0}};
  };
  f.expected = {{"requests", {{{"cached_tokens", 0}}, {{"cached_tokens", 16}}}}, {"work", work(24)}};
  json fewer = {{"requests", {{{"cached_tokens", 0}}, {{"cached_tokens", 0}}}}, {"work", work(40)}};
  std::string text = joined(course::localize(f, fewer));
  EXPECT_TRUE(has(text, "took 40 rows in every layer, one per prompt token your prefix cache did not serve (40 - 0 your cache "
                        "served = 40); the call has 24 new positions (40 prompt tokens, 16 of them served by the reference's "
                        "prefix cache): your prefix cache served 16 tokens fewer than the reference's."))
      << text;
  EXPECT_TRUE(has(text, "Request 1 (prompt 1, 20 tokens): your cache served 0 tokens from the prefix cache where 16 are "
                        "expected. Request 0 served the expected tokens, and its logits are right."))
      << text;
  EXPECT_FALSE(has(text, "again")) << text;
  json recomputed = {{"requests", {{{"cached_tokens", 0}}, {{"cached_tokens", 16}}}}, {"work", work(40)}};
  text = joined(course::localize(f, recomputed));
  EXPECT_TRUE(has(text, "took 40 rows in every layer, 16 more than the prompt tokens your prefix cache did not serve (24): "
                        "16 rows were computed that your cache does not keep"))
      << text;
}

// Issue 25: a saved cache that never held the prefix is not said to have held it.
TEST(localize, the_saved_prefix_is_described_by_what_it_must_hold_not_by_what_it_held) {
  course::Fixture f;
  f.stage = "prefix-reuse";
  f.adapter = "run_prefix_reuse";
  f.input = {{"prefix", {1, 2, 3, 4, 5, 6}}, {"suffixes", {{7}}}};
  json six = json::array(), none = json::array();
  for (int l = 0; l < 12; ++l) six.push_back({12, 6, 64}), none.push_back({12, 0, 64});
  f.expected = {{"continued", {json::object()}}, {"saved_rows_after_each", {six}}};
  json actual = {{"continued", {json::object()}}, {"saved_rows_after_each", {none}}};
  std::string text = joined(course::localize(f, actual));
  EXPECT_TRUE(has(text, "Right after continuation 0, the saved cache's rows (save_prefix of the 6-token prefix must leave 6 "
                        "positions, and no continuation may change them): the lengths are [0, 0"))
      << text;
  EXPECT_FALSE(has(text, "it held")) << text;
}

// Fewer rows than the learner's cache holds: positions that never went through the model,
// counted against the learner's own length.
TEST(work, fewer_rows_than_the_learners_cache_holds_are_counted_against_it) {
  FakeRun right(3);
  std::string text = joined(course::localize(right.fixture(), right.output(std::vector<int64_t>(12, 2))));
  EXPECT_TRUE(has(text, "Work: qkv and finish_block each took 2 rows in every layer, 1 fewer than the positions your cache "
                        "holds (3): 1 position was never put through the model in this call."))
      << text;
}

// Stages 9 and 13 say the same when a request's logits cannot be compared row by row.
TEST(localize, a_requests_logits_of_another_shape_or_missing) {
  course::Digest expected;
  expected.shape = {4, 50257};
  Tensor actual;
  actual.shape = {3, 50257};
  EXPECT_EQ(course::request_logits_shape_problem(2, actual, expected),
            "Request 2's logits are [3, 50257], expected [4, 50257].");
  EXPECT_EQ(course::request_logits_shape_problem(0, std::nullopt, expected),
            "Request 0's logits are missing, expected [4, 50257].");
  actual.shape = {4, 50257};
  EXPECT_EQ(course::request_logits_shape_problem(1, actual, expected), "");
}
