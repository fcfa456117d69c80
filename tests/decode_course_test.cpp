// Stages one-token, prefill and prefix-reuse, without running the model: the digest form
// of big tensors and its comparison, the decode detectors on hand-made outputs, and the
// decode fixtures' own promises (they name the stage's weights; all fixtures stay small).
// Grading the reference, the skeleton and the buggy runners is course_test's job.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "judge/compare.hpp"
#include "judge/diagnose.hpp"
#include "wire/digest.hpp"
#include "wire/fixture.hpp"
#include "judge/stages.hpp"
#include "test_support.hpp"

using course::json;
using course::Tensor;
using testing_support::source_dir;
namespace fs = std::filesystem;

namespace {

Tensor make(std::vector<int64_t> shape, std::vector<std::string> axes,
            const std::function<float(size_t)>& value) {
  Tensor t;
  t.shape = std::move(shape);
  t.axes = std::move(axes);
  t.data.resize(size_t(t.numel()));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = value(i);
  return t;
}

json full(const Tensor& t) { return course::tensor_to_json(t, course::TensorEncoding::base64); }

float wavy(size_t i) { return float(std::sin(double(i) * 0.37) * 2.0); }

std::set<std::string> ids(const std::vector<course::Diagnosis>& ds) {
  std::set<std::string> out;
  for (const auto& d : ds) out.insert(d.id);
  return out;
}

// Grades `actual` against `fixture` with the stage's detector.
std::set<std::string> diagnose(
    const course::Fixture& fixture, const json& actual,
    std::vector<course::Diagnosis> (*detector)(const course::CaseView&)) {
  std::vector<course::Mismatch> mismatches = course::compare_outputs(fixture.expected, actual);
  EXPECT_FALSE(mismatches.empty()) << "the hand-made output should differ from the expected one";
  return ids(detector(course::CaseView{fixture, actual, mismatches}));
}

// ---- a GPT-2 run's output, small: 12 layers x 12 heads x seq x 64, logits of 40 --------

struct FakeRun {
  Tensor keys, values, logits;
  std::vector<int> lengths;
  json output() const {
    json rows = json::array();
    for (int n : lengths) rows.push_back({12, n, 64});
    return {{"cache_shapes", rows},
            {"keys", full(keys)},
            {"values", full(values)},
            {"logits", full(logits)}};
  }
  json digested() const {
    json out = output();
    out["keys"] = course::make_digest(keys, {0, 63}, false);
    out["values"] = course::make_digest(values, {0, 63}, false);
    out["logits"] =
        course::make_digest(logits, course::spread_indices(logits.shape.back(), 8), true);
    return out;
  }
  float& key(int layer, int head, int pos, int dim) {
    const int64_t seq = keys.shape[2];
    return keys.data[size_t(((layer * 12 + head) * seq + pos) * 64 + dim)];
  }
};

FakeRun make_run(int seq, int steps) {
  FakeRun r;
  r.keys = make({12, 12, seq, 64}, {"layer", "head", "pos", "dim"}, wavy);
  r.values = make({12, 12, seq, 64}, {"layer", "head", "pos", "dim"},
                  [](size_t i) { return wavy(i + 7); });
  r.logits = make({steps, 40}, {"step", "vocab"}, [](size_t i) { return wavy(i * 3 + 1); });
  r.lengths.assign(12, seq);
  return r;
}

course::Fixture fixture_of(const std::string& stage, const std::string& adapter, json input,
                           json expected) {
  course::Fixture f;
  f.stage = stage;
  f.name = "hand-made";
  f.adapter = adapter;
  f.input = std::move(input);
  f.expected = std::move(expected);
  return f;
}

// ---- attention probes: one-hot values, so out[h][j] is a softmax weight ----------------

std::vector<float> softmax(std::vector<float> s) {
  float m = s[0], sum = 0;
  for (float x : s) m = std::max(m, x);
  for (float& x : s) sum += x = std::exp(x - m);
  for (float& x : s) x /= sum;
  return s;
}

// Weights of n_rows query rows over n positions, row r at position n - n_rows + r, from
// scores (r, h, j) -> score; masked positions get 0.
Tensor probe_out(int n, int n_rows, const std::function<float(int, int, int)>& score, bool causal) {
  Tensor t;
  t.shape =
      n_rows == 1 && !causal ? std::vector<int64_t>{12, 64} : std::vector<int64_t>{n_rows, 12, 64};
  t.data.assign(size_t(n_rows) * 768, 0.0f);
  for (int r = 0; r < n_rows; ++r)
    for (int h = 0; h < 12; ++h) {
      const int visible = causal ? n - n_rows + r + 1 : n;
      std::vector<float> s;
      for (int j = 0; j < visible; ++j) s.push_back(score(r, h, j));
      std::vector<float> p = softmax(s);
      for (int j = 0; j < visible; ++j) t.data[size_t((r * 12 + h) * 64 + j)] = p[size_t(j)];
    }
  return t;
}

json probe_input(int n) {
  Tensor keys = make({n, 768}, {"pos", "feature"}, wavy);
  return {
      {"keys", full(keys)}, {"values", full(keys)}, {"q", full(make({768}, {"feature"}, wavy))}};
}

float score(int r, int h, int j) { return float((j * 5 + h + r) % 7) * 0.125f; }

}  // namespace

// ---- digest tensors -------------------------------------------------------------------------

TEST(digest, a_tensor_equal_to_its_digest_passes) {
  Tensor t = make({3, 100}, {"step", "vocab"}, wavy);
  json expected = {{"logits", course::make_digest(t, course::spread_indices(100, 8), true)}};
  EXPECT_TRUE(course::compare_outputs(expected, {{"logits", full(t)}}).empty());
}

TEST(digest, a_changed_sampled_value_names_the_row_and_shows_the_values) {
  Tensor t = make({3, 100}, {"step", "vocab"}, wavy);
  json expected = {{"logits", course::make_digest(t, course::spread_indices(100, 8), true)}};
  t.data[100 + 99] += 0.5f;  // row 1, the last sampled index
  auto ms = course::compare_outputs(expected, {{"logits", full(t)}});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].path, "logits");
  EXPECT_NE(ms[0].summary.find("1 of 3 rows"), std::string::npos) << ms[0].summary;
  EXPECT_NE(ms[0].summary.find("step 1"), std::string::npos) << ms[0].summary;
  EXPECT_NE(ms[0].detail.find("BAD step 1, vocab 99"), std::string::npos) << ms[0].detail;
  EXPECT_EQ(ms[0].data["rows_differing"], 1);
  EXPECT_EQ(ms[0].data["first_row"]["step"], 1);
  EXPECT_EQ(ms[0].data["sampled_mismatches"], 1);
  EXPECT_TRUE(ms[0].data.contains("expected_argmax"));
}

TEST(digest, a_change_between_samples_is_still_caught) {
  Tensor t = make({2, 100}, {"step", "vocab"}, wavy);
  json expected = {{"x", course::make_digest(t, {0, 99}, false)}};
  t.data[50] = std::nextafter(t.data[50], 10.0f);  // one ulp, not a sampled index
  auto ms = course::compare_outputs(expected, {{"x", full(t)}});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_NE(ms[0].summary.find("sampled values agree"), std::string::npos) << ms[0].summary;
}

TEST(digest, minus_zero_equals_zero_and_nan_never_equals) {
  Tensor t = make({1, 4}, {"row", "col"}, [](size_t i) { return i == 0 ? 0.0f : 1.0f; });
  json expected = {{"x", course::make_digest(t, {0}, false)}};
  t.data[0] = -0.0f;
  EXPECT_TRUE(course::compare_outputs(expected, {{"x", full(t)}}).empty());
  t.data[0] = NAN;
  EXPECT_EQ(course::compare_outputs(expected, {{"x", full(t)}}).size(), 1u);
}

TEST(digest, a_shape_that_differs_is_reported_as_a_shape) {
  Tensor t = make({2, 10}, {"step", "vocab"}, wavy);
  json expected = {{"x", course::make_digest(t, {0}, false)}};
  auto ms =
      course::compare_outputs(expected, {{"x", full(make({3, 10}, {"step", "vocab"}, wavy))}});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_NE(ms[0].summary.find("shape [3, 10], expected [2, 10]"), std::string::npos)
      << ms[0].summary;
}

TEST(digest, a_malformed_digest_is_an_error) {
  json bad = course::make_digest(make({2, 10}, {}, wavy), {0}, false);
  bad["rows"].erase(0);
  EXPECT_THROW(course::digest_from_json(bad), course::TensorError);
}

// ---- detectors: attention probes -------------------------------------------------------------

TEST(decode_detectors, attend_one_skipping_positions_is_masked_decode) {
  auto f = fixture_of("one-token", "attend_one", probe_input(5),
                      {{"out", full(probe_out(5, 1, score, false))}});
  Tensor only_first = probe_out(1, 1, score, false);
  EXPECT_EQ(diagnose(f, {{"out", full(only_first)}}, course::diagnose_one_token),
            std::set<std::string>{"dec.masked_decode"});
}

TEST(decode_detectors, attend_one_without_scale_is_missing_scale) {
  auto f = fixture_of("one-token", "attend_one", probe_input(5),
                      {{"out", full(probe_out(5, 1, score, false))}});
  Tensor unscaled = probe_out(
      5, 1, [](int r, int h, int j) { return score(r, h, j) * 8.0f; }, false);
  EXPECT_EQ(diagnose(f, {{"out", full(unscaled)}}, course::diagnose_one_token),
            std::set<std::string>{"dec.missing_scale"});
}

TEST(decode_detectors, ulp_differences_are_close_not_exact) {
  Tensor right = probe_out(5, 1, score, false);
  auto f = fixture_of("one-token", "attend_one", probe_input(5), {{"out", full(right)}});
  Tensor close = right;
  for (float& x : close.data)
    if (x > 0) x = std::nextafter(x, 2.0f);
  EXPECT_EQ(diagnose(f, {{"out", full(close)}}, course::diagnose_one_token),
            std::set<std::string>{"dec.close_not_exact"});
}

TEST(decode_detectors, attend_causal_seeing_later_positions_is_no_mask) {
  auto f = fixture_of("prefill", "attend_causal", probe_input(6),
                      {{"out", full(probe_out(6, 4, score, true))}});
  Tensor leaky = probe_out(6, 4, score, false);  // every row sees all 6 positions
  leaky.shape = {4, 12, 64};
  EXPECT_EQ(diagnose(f, {{"out", full(leaky)}}, course::diagnose_prefill),
            std::set<std::string>{"dec.prefill_no_mask"});
}

TEST(decode_detectors, attend_causal_not_seeing_itself_is_mask_off_by_one) {
  auto f = fixture_of("prefill", "attend_causal", probe_input(4),
                      {{"out", full(probe_out(4, 4, score, true))}});
  Tensor shy = probe_out(4, 4, score, true);
  for (int r = 0; r < 4; ++r)
    for (int h = 0; h < 12; ++h) {
      std::vector<float> s;
      for (int j = 0; j < r; ++j) s.push_back(score(r, h, j));
      std::vector<float> p = s.empty() ? std::vector<float>{} : softmax(s);
      for (int j = 0; j < 64; ++j)
        shy.data[size_t((r * 12 + h) * 64 + j)] =
            j < r ? p[size_t(j)] : (r == 0 && j == 0 ? NAN : 0.0f);
    }
  EXPECT_EQ(diagnose(f, {{"out", full(shy)}}, course::diagnose_prefill),
            std::set<std::string>{"dec.mask_off_by_one"});
}

// ---- detectors: GPT-2 runs ------------------------------------------------------------------

TEST(decode_detectors, lengths_show_double_and_partial_appends) {
  FakeRun right = make_run(2, 2);
  auto f = fixture_of("one-token", "run_decode", {{"tokens", {1, 2}}}, right.digested());
  FakeRun twice = make_run(4, 2);
  EXPECT_EQ(diagnose(f, twice.output(), course::diagnose_one_token),
            std::set<std::string>{"dec.double_append"});
  FakeRun half = right;
  for (int l = 6; l < 12; ++l) half.lengths[size_t(l)] = 0;
  EXPECT_EQ(diagnose(f, half.output(), course::diagnose_one_token),
            std::set<std::string>{"dec.append_some_layers"});
}

TEST(decode_detectors, layer_0_keys_that_differ_mean_a_wrong_position) {
  FakeRun right = make_run(3, 3);
  auto f = fixture_of("one-token", "run_decode", {{"tokens", {1, 2, 3}}}, right.digested());
  FakeRun moved = right;
  moved.key(0, 4, 1, 0) += 1.0f;
  EXPECT_EQ(diagnose(f, moved.output(), course::diagnose_one_token),
            std::set<std::string>{"dec.position_not_continuing"});
}

TEST(decode_detectors, a_wrong_first_step_with_right_layer_0_is_append_after_attention) {
  FakeRun right = make_run(3, 3);
  auto f = fixture_of("one-token", "run_decode", {{"tokens", {1, 2, 3}}}, right.digested());
  FakeRun late = right;
  late.key(1, 0, 0, 0) += 1.0f;
  late.logits.data[0] += 1.0f;
  EXPECT_EQ(diagnose(f, late.output(), course::diagnose_one_token),
            std::set<std::string>{"dec.append_after_attention"});
  // Right first step, wrong later ones: nothing is named from the run alone (the probes
  // tell a skipped position from a missing scale).
  FakeRun later = right;
  later.key(1, 0, 2, 0) += 1.0f;
  later.logits.data[80] += 1.0f;
  EXPECT_TRUE(diagnose(f, later.output(), course::diagnose_one_token).empty());
}

TEST(decode_detectors, layer_1_wrong_except_the_last_row_is_prefill_without_mask) {
  FakeRun right = make_run(4, 1);
  auto f = fixture_of("prefill", "run_prefill", {{"tokens", {1, 2, 3, 4}}}, right.digested());
  FakeRun leaky = right;
  for (int p = 0; p < 3; ++p) leaky.key(1, 0, p, 5) += 1.0f;
  leaky.logits.data[0] += 1.0f;
  EXPECT_EQ(diagnose(f, leaky.output(), course::diagnose_prefill),
            std::set<std::string>{"dec.prefill_no_mask"});
}

TEST(decode_detectors, prefix_reuse_that_grows_the_saved_cache_is_no_clone) {
  FakeRun saved = make_run(3, 1), cont = make_run(4, 1);
  json rows = saved.output()["cache_shapes"];
  json expected = {{"saved_rows_after_each", {rows, rows}},
                   {"saved", saved.digested()},
                   {"continued", {cont.digested()}}};
  json actual = {{"saved_rows_after_each", {cont.output()["cache_shapes"], rows}},
                 {"saved", saved.output()},
                 {"continued", {cont.output()}}};
  auto f = fixture_of("prefix-reuse", "run_prefix_reuse", json::object(), expected);
  EXPECT_EQ(diagnose(f, actual, course::diagnose_prefix_reuse),
            std::set<std::string>{"dec.reuse_mutates_saved"});
}

TEST(decode_detectors, continued_layer_0_wrong_after_the_prefix_is_suffix_restart) {
  FakeRun saved = make_run(3, 1), cont = make_run(5, 1);
  json rows = saved.output()["cache_shapes"];
  json expected = {{"saved_rows_after_each", {rows}},
                   {"saved", saved.digested()},
                   {"continued", {cont.digested()}}};
  FakeRun restarted = cont;
  restarted.key(0, 2, 3, 0) += 1.0f;
  json actual = {{"saved_rows_after_each", {rows}},
                 {"saved", saved.output()},
                 {"continued", {restarted.output()}}};
  auto f = fixture_of("prefix-reuse", "run_prefix_reuse", json::object(), expected);
  EXPECT_EQ(diagnose(f, actual, course::diagnose_prefix_reuse),
            std::set<std::string>{"dec.suffix_positions_restart"});
}

// ---- the decode fixtures ------------------------------------------------------------------

TEST(decode_fixtures, name_the_weights_their_stage_sets_up) {
  int checked = 0;
  for (const char* slug : {"one-token", "prefill", "prefix-reuse"}) {
    const course::Stage* stage = course::find_stage(slug);
    ASSERT_TRUE(stage) << slug;
    ASSERT_TRUE(stage->setup.contains("weights")) << slug;
    for (const auto& file : course::list_fixtures(source_dir() / "fixtures" / slug)) {
      course::Fixture f = course::load_fixture(file);
      if (!f.input.contains("weights")) continue;  // attention probes need no model
      EXPECT_EQ(f.input["weights"], stage->setup["weights"]) << file;
      ++checked;
    }
  }
  EXPECT_GE(checked, 9);
}

TEST(decode_fixtures, all_fixtures_together_stay_under_10_mb) {
  uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(source_dir() / "fixtures"))
    if (e.is_regular_file()) total += e.file_size();
  EXPECT_LT(total, 10u * 1000 * 1000);
}

TEST(decode_fixtures, every_decode_mistake_has_a_buggy_runner_file) {
  for (const auto& m : course::decode_mistakes()) {
    bool found = false;
    for (const auto& e : fs::directory_iterator(source_dir() / "tests/buggy")) {
      if (e.path().extension() != ".mistake") continue;
      found = found || testing_support::read_file(e.path()).find(std::string("diagnosis: ") + m.id +
                                                                 "\n") != std::string::npos;
    }
    EXPECT_TRUE(found) << m.id;
  }
}
