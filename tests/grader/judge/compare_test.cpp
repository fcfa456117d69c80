#include "judge/compare.hpp"

#include "judge/answer.hpp"

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

namespace {

json nested_arrays(int depth) {
  json j = 1;
  for (int i = 0; i < depth; ++i) j = json::array({std::move(j)});
  return j;
}

}  // namespace

TEST(compare, short_json_of_a_document_100000_deep_is_short_and_safe) {
  const json deep = {{"plan", nested_arrays(100000)}};
  const std::string s = short_json(deep);
  EXPECT_LE(s.size(), 160u);
  EXPECT_NE(s.find("[...]"), std::string::npos) << s;
  EXPECT_LE(short_json(json(std::string(1 << 20, 'x'))).size(), 160u);
  EXPECT_EQ(short_json(json::parse(R"({"t": {"shape": [12, 3, 64], "dtype": "float32"}, "n": 3})")),
            R"({"n": 3, "t": <float32 [12, 3, 64]>})");
}

TEST(compare, an_answer_100000_deep_is_compared_without_recursing_into_it) {
  const json expected = {{"caches", {{{"n", 1}}}}, {"rows", {{12, 1, 64}}}};
  const json actual = {{"caches", {nested_arrays(100000)}}, {"rows", nested_arrays(100000)}};
  const auto m = compare_outputs(expected, actual);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].path, "caches[0]");
  EXPECT_LT(m[0].summary.size(), 300u);
  EXPECT_EQ(m[1].path, "rows");
  EXPECT_LT(m[1].detail.size(), 2000u);
}

TEST(compare, a_long_list_of_rows_is_shown_in_part) {
  json rows = json::array();
  for (int i = 0; i < 100000; ++i) rows.push_back({12, 1, 64});
  const auto m = compare_outputs({{"rows", {{12, 1, 64}}}}, {{"rows", rows}});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].summary, "expected 1 shape rows, got 100000");
  EXPECT_NE(m[0].detail.find("... and 99995 more rows"), std::string::npos) << m[0].detail;
  EXPECT_TRUE(m[0].data["actual"].is_string()) << "not copied whole into the results";
}

TEST(compare, a_number_beyond_float32_is_a_mismatch_not_undefined) {
  const auto m = compare_outputs({{"x", 1.5}}, {{"x", 1e300}});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].summary.find("beyond float32's range"), std::string::npos) << m[0].summary;
}

TEST(compare, answers_are_parsed_with_limits_and_named_problems) {
  EXPECT_EQ(parse_answer(R"({"status": "ok", "output": {"n": 1}})").problem, "");
  EXPECT_EQ(parse_answer(R"({"status": "ok", "output": {"n": 1}})").document["output"]["n"], 1);
  const std::string deep = R"({"status": "ok", "output": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(parse_answer(deep).problem, "the runner's answer: is nested deeper than 64 levels of arrays and objects");
  EXPECT_NE(parse_answer(R"({"status": "ok", "output": [1e400]})").problem.find("too large for a double"),
            std::string::npos);
  EXPECT_NE(parse_answer("{\"status\": ").problem.find("is not valid JSON"), std::string::npos);
  EXPECT_NE(parse_answer("[1]").problem.find("is not a JSON object"), std::string::npos);
  EXPECT_NE(parse_answer(R"({"status": 5})").problem.find("has no string \"status\""), std::string::npos);
  EXPECT_NE(parse_answer(R"({"status": "exception", "type": 1})").problem.find("\"type\""), std::string::npos);
  const Answer long_what = parse_answer(R"({"status": "exception", "what": ")" + std::string(100000, 'w') + "\"}");
  EXPECT_EQ(long_what.problem, "");
  EXPECT_LT(long_what.what.size(), kMaxAnswerText + 20);
}

// Where an exception was thrown: a short list of offsets, each checked; anything else in
// its place is a malformed answer, never a crash or a location made up.
TEST(compare, an_exceptions_stack_is_a_short_list_of_offsets) {
  const Answer located = parse_answer(
      R"({"status": "exception", "type": "std::out_of_range", "thrown_at": [4660, 0, 17]})");
  EXPECT_EQ(located.problem, "");
  EXPECT_EQ(located.thrown_at, (std::vector<uint64_t>{4660, 0, 17}));
  EXPECT_EQ(parse_answer(R"({"status": "exception", "thrown_unrecorded": "not_found"})")
                .thrown_unrecorded,
            "not_found");
  for (const char* bad : {R"({"status": "exception", "thrown_at": "0x1234"})",
                          R"({"status": "exception", "thrown_at": [-1]})",
                          R"({"status": "exception", "thrown_at": [1.5]})",
                          R"({"status": "exception", "thrown_unrecorded": 3})"})
    EXPECT_NE(parse_answer(bad).problem.find("\"thrown_at\""), std::string::npos) << bad;
  std::string list;
  for (int i = 0; i < 100; ++i) list += (i ? ", " : "") + std::to_string(i + 1);
  EXPECT_NE(parse_answer(R"({"status": "exception", "thrown_at": [)" + list + "]}")
                .problem.find("at most"),
            std::string::npos);
}

// Issue 25: the differences that explain most come first (counts, lengths, tables and list
// sizes, then tensor shapes, then tensor values, then the rest such as hex keys), whatever
// the keys' order in the document.
TEST(compare, counts_and_tables_come_before_tensors_and_hex_keys) {
  Tensor wrong = cube(1);
  json e = {{"a_key", "5d87012f52321228"}, {"b_values", as_json(cube())}, {"c_table", {0, 1}}, {"d_length", 17}};
  json a = {{"a_key", "98350b6fc388762c"}, {"b_values", as_json(wrong)}, {"c_table", {0, 2}}, {"d_length", 18}};
  auto m = compare_outputs(e, a);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].path, "c_table");
  EXPECT_EQ(m[1].path, "d_length");
  EXPECT_EQ(m[2].path, "b_values");
  EXPECT_EQ(m[3].path, "a_key");
}

// Issue 22: logits rows are counted in one wording whatever shape they came in.
TEST(compare, a_flat_tensor_of_whole_rows_is_counted_in_rows) {
  Tensor expected;
  expected.shape = {4, 5};
  expected.data.assign(20, 1.0f);
  Tensor flat;
  flat.shape = {25};
  flat.data.assign(25, 1.0f);
  Tensor one_row = flat;
  one_row.shape = {1, 25};
  auto m = compare_tensors("logits", expected, flat);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].summary, "shape [25], expected [4, 5]: 25 = 5 x 5 values, 5 rows of 5 where 4 are expected");
  auto n = compare_tensors("logits", expected, one_row);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].summary, "shape [1, 25], expected [4, 5]: 25 = 5 x 5 values, 5 rows of 5 where 4 are expected");
  EXPECT_EQ(m[0].rank, 1);
}
