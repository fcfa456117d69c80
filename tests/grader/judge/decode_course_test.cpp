// Stages one-token, prefill and prefix-reuse, without running the model: the digest form
// of big tensors and its comparison, and the decode fixtures' own promises (they name the
// stage's weights; all fixtures stay small). Grading the reference and the skeleton is
// course_test's job, the known mistakes catalogue_test's.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "judge/compare.hpp"
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

// ---- the decode fixtures ------------------------------------------------------------------

TEST(decode_fixtures, name_the_weights_their_stage_sets_up) {
  int checked = 0;
  // Every stage that sets up weights (stages/manifest.json).
  for (const course::Stage& each : course::stage_table()) {
    if (!each.setup.contains("weights")) continue;
    const course::Stage* stage = &each;
    const std::string& slug = each.slug;
    for (const auto& file : course::list_fixtures(source_dir() / "fixtures" / slug)) {
      course::Fixture f = course::load_fixture(file);
      if (!f.input.contains("weights")) continue;  // attention probes need no model
      // The stage's weights; a case may tie two tokens on top of them ("copy_token":
      // stage generate's tie), which the runner derives from the stage's model.
      json weights = f.input["weights"];
      if (weights.is_object()) weights.erase("copy_token");
      EXPECT_EQ(weights, stage->setup["weights"]) << file;
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
