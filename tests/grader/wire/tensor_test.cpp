#include "wire/tensor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace course;

namespace {

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

Tensor random_tensor(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t;
  t.shape = {int64_t(n)};
  for (size_t i = 0; i < n; ++i) {
    // Random bit patterns cover every exponent and mantissa, not just "nice" values.
    float f;
    uint32_t b = rng();
    std::memcpy(&f, &b, 4);
    if (!std::isfinite(f)) f = 1.5f;
    t.data.push_back(f);
  }
  return t;
}

}  // namespace

TEST(tensor, numbers_round_trip_every_float_bit_for_bit) {
  Tensor t = random_tensor(20000, 7);
  t.data.push_back(-0.0f);
  t.data.push_back(std::numeric_limits<float>::denorm_min());
  t.data.push_back(std::numeric_limits<float>::max());
  t.data.push_back(std::numeric_limits<float>::min());
  t.shape = {int64_t(t.data.size())};
  // Through text, as a fixture file would go.
  json j = json::parse(tensor_to_json(t, TensorEncoding::numbers).dump());
  ASSERT_TRUE(j.contains("data"));
  Tensor back = tensor_from_json(j);
  ASSERT_EQ(back.data.size(), t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i) ASSERT_EQ(bits(back.data[i]), bits(t.data[i])) << "index " << i;
}

TEST(tensor, base64_round_trips_non_finite_values) {
  Tensor t;
  t.shape = {2, 2};
  t.axes = {"row", "col"};
  t.data = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY, 1.0f};
  json j = json::parse(tensor_to_json(t, TensorEncoding::numbers).dump());
  EXPECT_TRUE(j.contains("data_b64")) << "non-finite data falls back to base64";
  Tensor back = tensor_from_json(j);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(bits(back.data[i]), bits(t.data[i]));
  EXPECT_EQ(back.axes, t.axes);
}

TEST(tensor, base64_handles_every_padding_length) {
  for (size_t n = 0; n < 10; ++n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = uint8_t(i * 37 + 11);
    EXPECT_EQ(base64_decode(base64_encode(bytes.data(), n)), bytes) << n;
  }
  EXPECT_THROW(base64_decode("abc"), TensorError);
  EXPECT_THROW(base64_decode("ab!d"), TensorError);
  EXPECT_THROW(base64_decode("a=bc"), TensorError);
}

TEST(tensor, rejects_data_that_disagrees_with_shape) {
  json j = {{"shape", {2, 3}}, {"dtype", "float32"}, {"data", {1, 2, 3, 4, 5}}};
  try {
    tensor_from_json(j);
    FAIL() << "no error";
  } catch (const TensorError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 6 values but its data has 5"), std::string::npos) << e.what();
  }
  json b = {{"shape", {2}}, {"dtype", "float32"}, {"data_b64", base64_encode("abcd", 4)}};
  EXPECT_THROW(tensor_from_json(b), TensorError);
}

TEST(tensor, rejects_malformed_tensors) {
  for (const char* text : {
           R"({"shape": [1], "dtype": "float64", "data": [1]})",
           R"({"shape": [-1], "dtype": "float32", "data": []})",
           R"({"shape": 3, "dtype": "float32", "data": [1, 2, 3]})",
           R"({"shape": [1], "dtype": "float32"})",
           R"({"shape": [1], "dtype": "float32", "data": ["x"]})",
           R"({"shape": [1], "dtype": "float32", "data_b64": 5})",
           R"({"shape": [2], "dtype": "float32", "axes": ["a", "b"], "data": [1, 2]})",
       })
    EXPECT_THROW(tensor_from_json(json::parse(text)), TensorError) << text;
}

TEST(tensor, visits_nested_tensors_with_their_paths) {
  Tensor t;
  t.shape = {1};
  t.data = {2.0f};
  json doc = {{"caches", {{{"keys", tensor_to_json(t, TensorEncoding::numbers)}}}}};
  std::vector<std::string> paths;
  for_each_tensor(doc, "", [&](const std::string& p, const json&) { paths.push_back(p); });
  EXPECT_EQ(paths, std::vector<std::string>{"caches[0].keys"});
}

namespace {

// The TensorError message of reading `text` as a tensor, or "" when it reads.
std::string tensor_error(const std::string& text) {
  try {
    tensor_from_json(json::parse(text));
  } catch (const TensorError& e) {
    return e.what();
  }
  return "";
}

// [[[ ... 1 ... ]]]: `depth` arrays, one inside the other, built without recursion.
json nested_arrays(int depth) {
  json j = 1;
  for (int i = 0; i < depth; ++i) j = json::array({std::move(j)});
  return j;
}

}  // namespace

TEST(tensor, an_element_count_that_overflows_is_refused_not_wrapped) {
  // 2^32 * 2^32 wraps to 0 in 64 bits, which an empty data list would match.
  EXPECT_NE(tensor_error(R"({"shape": [4294967296, 4294967296], "dtype": "float32", "data": []})")
                .find("holds more than 2147483648 values"),
            std::string::npos);
  EXPECT_NE(tensor_error(R"({"shape": [18446744073709551615], "dtype": "float32", "data": []})")
                .find("not a size"),
            std::string::npos);
  EXPECT_EQ(checked_numel({int64_t(1) << 32, int64_t(1) << 32}), -1);
  EXPECT_EQ(checked_numel({3, 0, int64_t(1) << 40}), 0);
  Tensor t;
  t.shape = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(t.numel(), -1);
  EXPECT_THROW(tensor_to_json(t, TensorEncoding::base64), TensorError);
}

TEST(tensor, values_beyond_float32_and_wrong_types_are_named) {
  EXPECT_NE(tensor_error(R"({"shape": [2], "dtype": "float32", "data": [1, 1e300]})")
                .find("data[1] is 1e+300, outside float32's range"),
            std::string::npos);
  EXPECT_NE(tensor_error(R"({"shape": [1], "dtype": "float32", "data": [true]})").find("not a number"),
            std::string::npos);
  EXPECT_NE(tensor_error(R"({"shape": [1], "dtype": "float32", "axes": [3], "data": [1]})").find("\"axes\""),
            std::string::npos);
  // The largest float and the decimal that prints it are in range.
  EXPECT_EQ(tensor_error(R"({"shape": [2], "dtype": "float32", "data": [3.4028235e38, -3.4028234663852886e38]})"), "");
  float f;
  EXPECT_FALSE(json_to_float(json(3.5e38), f));
  EXPECT_TRUE(json_to_float(json(-1.5), f));
  EXPECT_EQ(f, -1.5f);
}

TEST(tensor, base64_data_of_the_wrong_length_is_refused_before_decoding) {
  const std::string many(4 << 20, 'A');  // 3 MB of zeros for a shape of 1 value
  EXPECT_NE(tensor_error(R"({"shape": [1], "dtype": "float32", "data_b64": ")" + many + "\"}")
                .find("holds 1 values but its data has 786432"),
            std::string::npos);
}

TEST(tensor, walking_a_document_100000_deep_does_not_recurse) {
  json doc = {{"a", nested_arrays(100000)}, {"t", {{"shape", {1}}, {"dtype", "float32"}, {"data", {1.0}}}}};
  std::vector<std::string> paths;
  for_each_tensor(doc, "", [&](const std::string& p, const json&) { paths.push_back(p); });
  EXPECT_EQ(paths, std::vector<std::string>{"t"});
  reencode_tensors(doc, TensorEncoding::base64);
  EXPECT_TRUE(doc["t"].contains("data_b64"));
  EXPECT_LT(json_excerpt(doc["a"]).size(), 20u);
}

TEST(tensor, visits_in_document_order) {
  Tensor t;
  t.shape = {1};
  t.data = {2.0f};
  const json tj = tensor_to_json(t, TensorEncoding::numbers);
  json doc = {{"b", {tj, {{"x", tj}}}}, {"a", tj}, {"c", {{"d", {1, 2, tj}}}}};
  std::vector<std::string> paths;
  for_each_tensor(doc, "out", [&](const std::string& p, const json&) { paths.push_back(p); });
  EXPECT_EQ(paths, (std::vector<std::string>{"out.a", "out.b[0]", "out.b[1].x", "out.c.d[2]"}));
}

TEST(tensor, excerpts_stay_short_whatever_the_value) {
  EXPECT_EQ(json_excerpt(json::parse("[12, 3, 64]")), "[12, 3, 64]");
  EXPECT_EQ(json_excerpt(json::parse(R"({"a": [1], "b": {}})")), R"({"a": [...], "b": {}})");
  EXPECT_LE(json_excerpt(json(std::string(100000, 'x'))).size(), 100u);
  json many = json::array();
  for (int i = 0; i < 100000; ++i) many.push_back(i);
  EXPECT_LE(json_excerpt(many).size(), 100u);
}
