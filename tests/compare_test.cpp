#include "judge/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace course;

namespace {

Tensor cube(float offset = 0) {
  Tensor t;
  t.shape = {2, 3, 4};
  t.axes = {"head", "pos", "dim"};
  for (int i = 0; i < 24; ++i) t.data.push_back(float(i) + offset);
  return t;
}

json as_json(const Tensor& t) { return tensor_to_json(t, TensorEncoding::base64); }

}  // namespace

TEST(compare, equal_outputs_have_no_mismatch) {
  json e = {{"rows", {{12, 1, 64}, {12, 0, 64}}}, {"t", as_json(cube())}, {"n", 3}};
  EXPECT_TRUE(compare_outputs(e, e).empty());
}

TEST(compare, names_first_mismatch_in_coordinates_with_count_and_max_diff) {
  Tensor a = cube();
  a.data[13] = 100.0f;  // head 1, pos 0, dim 1
  a.data[20] = 21.5f;
  auto m = compare_tensors("caches[0].keys", cube(), a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].summary.find("2 of 24 values differ"), std::string::npos) << m[0].summary;
  EXPECT_NE(m[0].summary.find("head 1, pos 0, dim 1: expected 13, got 100"), std::string::npos) << m[0].summary;
  EXPECT_NE(m[0].summary.find("max |diff| 87"), std::string::npos) << m[0].summary;
  EXPECT_EQ(m[0].data["mismatches"], 2);
  EXPECT_EQ(m[0].data["first"]["head"], 1);
  EXPECT_NE(m[0].detail.find("BAD head 1, pos 0, dim 1"), std::string::npos) << m[0].detail;
  EXPECT_NE(m[0].detail.find("ok  head 1, pos 0, dim 0"), std::string::npos) << m[0].detail;
}

TEST(compare, atol_is_zero_one_ulp_fails_and_bits_are_shown) {
  Tensor e = cube(0.1f), a = cube(0.1f);
  a.data[5] = std::nextafter(a.data[5], 100.0f);
  auto m = compare_tensors("t", e, a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].summary.find("bits 0x"), std::string::npos) << "decimals print alike: " << m[0].summary;
}

TEST(compare, nan_never_equals) {
  Tensor e = cube(), a = cube();
  e.data[0] = a.data[0] = NAN;
  auto m = compare_tensors("t", e, a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].data["max_abs_diff"], "inf");
}

TEST(compare, shape_difference_is_reported_before_values) {
  Tensor a = cube();
  a.shape = {3, 2, 4};
  auto m = compare_tensors("t", cube(), a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].summary, "shape [3, 2, 4], expected [2, 3, 4]");
}

TEST(compare, shape_rows_side_by_side_with_differing_rows_marked) {
  json e = {{12, 2, 64}, {12, 0, 64}, {12, 1, 64}};
  json a = {{12, 2, 64}, {12, 3, 64}, {12, 1, 64}};
  auto m = compare_shape_rows("rows", e, a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].summary, "1 of 3 shape rows differ");
  EXPECT_NE(m[0].detail.find("  1      [12, 0, 64]     [12, 3, 64]      <- differs\n"), std::string::npos) << m[0].detail;
  EXPECT_EQ(m[0].detail.find("0      [12, 2, 64]     [12, 2, 64]      <-"), std::string::npos) << m[0].detail;
  EXPECT_EQ(m[0].data["differing_rows"], json({1}));
}

TEST(compare, missing_and_mistyped_fields) {
  json e = {{"rows", {{12, 1, 64}}}, {"t", as_json(cube())}, {"n", 3}};
  auto m = compare_outputs(e, {{"rows", {{12, 1, 64}}}, {"t", 7}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].path, "n");
  EXPECT_EQ(m[0].summary, "missing from the output");
  EXPECT_EQ(m[1].path, "t");
  EXPECT_NE(m[1].summary.find("expected a tensor"), std::string::npos);
}

TEST(compare, list_length_and_int_shape) {
  json e = {{"caches", {{{"shape", {12, 3, 64}}}, {{"shape", {12, 0, 64}}}}}};
  auto m = compare_outputs(e, {{"caches", {{{"shape", {12, 4, 64}}}, {{"shape", {12, 0, 64}}}}}});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].path, "caches[0].shape");
  EXPECT_EQ(m[0].summary, "expected [12, 3, 64], got [12, 4, 64]");
  auto m2 = compare_outputs(e, {{"caches", json::array()}});
  ASSERT_EQ(m2.size(), 1u);
  EXPECT_EQ(m2[0].summary, "expected 2 entries, got 0");
}
