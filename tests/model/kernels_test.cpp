// The matrix product, layer norm, GELU and exp kernels (kernels.hpp) and the multi-dot of
// the model's attention (detail.hpp): fast paths against the plain loops, bit for bit, and
// against double arithmetic within 1e-5 relative. Each vector path (SSE2, AVX2, AVX-512)
// is forced in turn and checked on its own, on shapes that leave partial tiles.
#include "kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "detail.hpp"
#include "model_test_helpers.hpp"
#include "ops.hpp"
#include "synthetic.hpp"
#include "threads.hpp"

namespace {

using gpt2::kernels::Epilogue;
using gpt2::kernels::VectorPath;
using model_test::same_bits;

std::vector<float> values(uint64_t seed, size_t n, float offset = 0.0f) {
  std::vector<float> v(n);
  gpt2::synthetic_fill(seed, 7, gpt2::TensorKind::norm_weight, 0, n, v.data());
  for (float& x : v) x = (x - 1.0f) * 20.0f + offset;  // roughly N(0, 1)
  return v;
}

struct Shape {
  int rows, n_in, n_out;
};

float inf_float() { return std::numeric_limits<float>::infinity(); }

// The same weights in both layouts; `panel_storage` keeps the panel copy alive.
gpt2::kernels::Matrix row_major(const std::vector<float>& w, int n_in, int n_out) {
  return {w.data(), n_in, n_out, false};
}
gpt2::kernels::Matrix panels(const std::vector<float>& w, int n_in, int n_out,
                             std::vector<float>& panel_storage) {
  panel_storage.assign(gpt2::kernels::panel_floats(n_in, n_out), -1.0f);
  gpt2::kernels::to_panels(w.data(), n_in, n_out, panel_storage.data());
  return {panel_storage.data(), n_in, n_out, true};
}

class matmul_shapes : public testing::TestWithParam<Shape> {};

TEST_P(matmul_shapes, fast_paths_equal_the_plain_loop_bit_for_bit) {
  const Shape s = GetParam();
  const auto x = values(1, static_cast<size_t>(s.rows) * s.n_in);
  const auto w = values(2, static_cast<size_t>(s.n_in) * s.n_out);
  const auto b = values(3, s.n_out);
  const auto y0 = values(4, static_cast<size_t>(s.rows) * s.n_out);
  std::vector<float> storage;
  const gpt2::kernels::Matrix rm = row_major(w, s.n_in, s.n_out);
  const gpt2::kernels::Matrix pm = panels(w, s.n_in, s.n_out, storage);
  for (Epilogue e : {Epilogue::store, Epilogue::gelu, Epilogue::add}) {
    for (bool bias : {true, false}) {
      std::vector<float> want = y0;
      gpt2::kernels::matmul_plain(x.data(), s.rows, rm, bias ? b.data() : nullptr, want.data(), e);
      for (const auto& m : {rm, pm}) {
        std::vector<float> plain = y0;
        gpt2::kernels::matmul_plain(x.data(), s.rows, m, bias ? b.data() : nullptr, plain.data(),
                                    e);
        EXPECT_TRUE(same_bits(plain, want, s.n_out)) << "plain, panels " << m.panels;
        for (int threads : {1, 2, 3}) {
          gpt2::ThreadPool pool(threads);
          std::vector<float> got = y0;
          gpt2::kernels::matmul(x.data(), s.rows, m, bias ? b.data() : nullptr, got.data(), e,
                                &pool);
          EXPECT_TRUE(same_bits(got, want, s.n_out))
              << "epilogue " << static_cast<int>(e) << ", bias " << bias << ", panels " << m.panels
              << ", threads " << threads;
        }
      }
    }
  }
}

TEST_P(matmul_shapes, agrees_with_double_arithmetic) {
  const Shape s = GetParam();
  const auto x = values(5, static_cast<size_t>(s.rows) * s.n_in);
  const auto w = values(6, static_cast<size_t>(s.n_in) * s.n_out);
  const auto b = values(7, s.n_out);
  std::vector<float> got(static_cast<size_t>(s.rows) * s.n_out);
  gpt2::kernels::matmul(x.data(), s.rows, row_major(w, s.n_in, s.n_out), b.data(), got.data(),
                        Epilogue::store, nullptr);
  // Relative to the sum of |terms|: the scale a float sum's rounding error is measured in.
  for (int r = 0; r < s.rows; ++r) {
    for (int j = 0; j < s.n_out; ++j) {
      double sum = b[j], mag = std::fabs(b[j]);
      for (int k = 0; k < s.n_in; ++k) {
        const double t =
            static_cast<double>(x[r * s.n_in + k]) * w[static_cast<size_t>(k) * s.n_out + j];
        sum += t;
        mag += std::fabs(t);
      }
      ASSERT_LE(std::fabs(got[r * s.n_out + j] - sum), 1e-5 * mag) << r << ", " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(kernels, matmul_shapes,
                         testing::Values(Shape{1, 16, 48}, Shape{1, 37, 97}, Shape{2, 16, 64},
                                         Shape{3, 20, 29}, Shape{4, 16, 48}, Shape{5, 33, 17},
                                         Shape{7, 64, 100}, Shape{16, 16, 97}, Shape{13, 128, 520},
                                         Shape{1, 8, 5000}, Shape{2, 8, 4100}, Shape{6, 300, 8},
                                         Shape{25, 48, 7}, Shape{1, 5, 3}),
                         [](const testing::TestParamInfo<Shape>& info) {
                           return "rows" + std::to_string(info.param.rows) + "_in" +
                                  std::to_string(info.param.n_in) + "_out" +
                                  std::to_string(info.param.n_out);
                         });

TEST(kernels, panel_layout_puts_each_element_where_documented) {
  const int n_in = 5, n_out = 70;
  const auto w = values(20, n_in * n_out);
  std::vector<float> storage;
  const auto m = panels(w, n_in, n_out, storage);
  ASSERT_EQ(storage.size(), 3u * 5 * 32);
  for (int k = 0; k < n_in; ++k) {
    for (int j = 0; j < n_out; ++j) {
      ASSERT_EQ(storage[(j / 32) * n_in * 32 + k * 32 + j % 32], w[k * n_out + j]);
      ASSERT_EQ(m.at(k, j), w[k * n_out + j]);
    }
    for (int j = n_out; j < 96; ++j) ASSERT_EQ(storage[2 * n_in * 32 + k * 32 + j % 32], 0.0f);
  }
}

TEST(kernels, matmul_row_alone_equals_row_in_batch) {
  const int n_in = 96, n_out = 203;
  const auto w = values(8, static_cast<size_t>(n_in) * n_out);
  const auto b = values(9, n_out);
  std::vector<float> storage;
  gpt2::ThreadPool pool(2);
  for (const auto& m : {row_major(w, n_in, n_out), panels(w, n_in, n_out, storage)}) {
    for (int rows : {1, 2, 3, 4, 7, 16, 31}) {
      const auto x = values(10, static_cast<size_t>(rows) * n_in);
      std::vector<float> batch(static_cast<size_t>(rows) * n_out);
      gpt2::kernels::matmul(x.data(), rows, m, b.data(), batch.data(), Epilogue::gelu, &pool);
      for (int r = 0; r < rows; ++r) {
        std::vector<float> alone(n_out);
        gpt2::kernels::matmul(x.data() + r * n_in, 1, m, b.data(), alone.data(), Epilogue::gelu,
                              &pool);
        EXPECT_TRUE(same_bits(
            alone, std::vector<float>(batch.begin() + r * n_out, batch.begin() + (r + 1) * n_out),
            n_out))
            << "row " << r << " of " << rows << ", panels " << m.panels;
      }
    }
  }
}

TEST(kernels, layer_norm_is_the_documented_loop) {
  const int n = 50;
  const auto x = values(11, n, 3.0f), w = values(12, n), b = values(13, n);
  std::vector<float> y(n);
  gpt2::kernels::layer_norm(x.data(), w.data(), b.data(), n, y.data());
  float sum = 0.0f;
  for (float v : x) sum = sum + v;
  const float mean = sum / 50.0f;
  float sq = 0.0f;
  for (float v : x) sq = sq + (v - mean) * (v - mean);
  const float rstd = 1.0f / std::sqrt(sq / 50.0f + 1e-5f);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = ((x[i] - mean) * rstd) * w[i] + b[i];
  EXPECT_TRUE(same_bits(y, want, n));
  // and against double arithmetic
  double m = 0, v2 = 0;
  for (float v : x) m += v;
  m /= n;
  for (float v : x) v2 += (v - m) * (v - m);
  v2 /= n;
  for (int i = 0; i < n; ++i) {
    const double d = (x[i] - m) / std::sqrt(v2 + 1e-5) * w[i] + b[i];
    EXPECT_NEAR(y[i], d, 1e-5 * (std::fabs(d) + 1.0));
  }
}

TEST(kernels, layer_norm_rows_is_layer_norm_row_by_row_on_any_threads) {
  const int rows = 37, n = 24;
  const auto x = values(14, rows * n), w = values(15, n), b = values(16, n);
  std::vector<float> want(rows * n), one(rows * n), many(rows * n);
  for (int r = 0; r < rows; ++r) {
    gpt2::kernels::layer_norm(x.data() + r * n, w.data(), b.data(), n, want.data() + r * n);
  }
  gpt2::kernels::layer_norm_rows(x.data(), w.data(), b.data(), rows, n, one.data(), nullptr);
  gpt2::ThreadPool pool(3);
  gpt2::kernels::layer_norm_rows(x.data(), w.data(), b.data(), rows, n, many.data(), &pool);
  EXPECT_TRUE(same_bits(one, want, n));
  EXPECT_TRUE(same_bits(many, want, n));
}

TEST(kernels, gelu_is_the_documented_expression) {
  for (float x = -8.0f; x < 8.0f; x += 0.01337f) {
    const float x3 = x * x * x;
    const float u = 0.7978845608f * (x + 0.044715f * x3);
    const float want = 0.5f * x * (1.0f + gpt2::tanh(u));
    const float got = gpt2::kernels::gelu(x);
    ASSERT_EQ(got, want) << x;
    const double xd = x;
    const double ref =
        0.5 * xd *
        (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (xd + 0.044715 * xd * xd * xd)));
    // 1 + tanh(u) cancels for negative x: the float formula's error is relative to ~0.1.
    ASSERT_NEAR(got, ref, 1e-6 * (std::fabs(ref) + 0.1)) << x;
  }
}

TEST(kernels, the_default_vector_path_is_the_widest_the_cpu_has) {
  VectorPath widest = VectorPath::sse2;
  for (VectorPath p : {VectorPath::avx2, VectorPath::avx512}) {
    if (gpt2::kernels::cpu_has(p)) widest = p;
  }
  EXPECT_EQ(gpt2::kernels::vector_path(), widest);
  EXPECT_TRUE(gpt2::kernels::cpu_has(VectorPath::sse2));
}

// ---- each vector path forced in turn -------------------------------------------------

// Makes matmul and exp_shifted use the test's path (skipping it on a CPU without it), and
// puts the default back afterwards.
class vector_path : public testing::TestWithParam<VectorPath> {
 protected:
  void SetUp() override {
    if (!gpt2::kernels::cpu_has(GetParam())) {
      GTEST_SKIP() << "this CPU has no " << gpt2::kernels::vector_path_name(GetParam());
    }
    gpt2::kernels::set_vector_path(GetParam());
  }
  void TearDown() override { gpt2::kernels::set_vector_path(saved_); }

 private:
  VectorPath saved_ = gpt2::kernels::vector_path();
};

// Odd shapes: every row count from 1 to 13 (partial row tiles, and the 1-3 row kernels),
// widths that leave a 32-, a 16- and a few-column remainder after the 64-column tiles, and
// an n_in long enough to be cut into k blocks (the sums carried from block to block).
TEST_P(vector_path, matmul_equals_the_plain_loop_on_odd_shapes) {
  gpt2::ThreadPool pool(2);
  for (const Shape shape :
       {Shape{13, 37, 117}, Shape{13, 1, 83}, Shape{13, 64, 64}, Shape{8, 2103, 85}}) {
    const auto w = values(30, static_cast<size_t>(shape.n_in) * shape.n_out);
    const auto b = values(31, shape.n_out);
    std::vector<float> storage;
    const gpt2::kernels::Matrix layouts[] = {row_major(w, shape.n_in, shape.n_out),
                                             panels(w, shape.n_in, shape.n_out, storage)};
    for (int rows = 1; rows <= shape.rows; ++rows) {
      const auto x = values(32, static_cast<size_t>(rows) * shape.n_in);
      const auto y0 = values(33, static_cast<size_t>(rows) * shape.n_out);
      for (Epilogue e : {Epilogue::store, Epilogue::gelu, Epilogue::add}) {
        for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
          std::vector<float> want = y0;
          gpt2::kernels::matmul_plain(x.data(), rows, layouts[0], bias, want.data(), e);
          for (const auto& m : layouts) {
            for (gpt2::ThreadPool* p : {static_cast<gpt2::ThreadPool*>(nullptr), &pool}) {
              std::vector<float> got = y0;
              gpt2::kernels::matmul(x.data(), rows, m, bias, got.data(), e, p);
              ASSERT_TRUE(same_bits(got, want, shape.n_out))
                  << rows << " x " << shape.n_in << " x " << shape.n_out << ", epilogue "
                  << static_cast<int>(e) << ", bias " << (bias != nullptr) << ", panels "
                  << m.panels << ", pool " << (p != nullptr);
            }
          }
        }
      }
    }
  }
}

// The weights cut to bfloat16 (their low 16 bits cleared), so that they are exactly
// representable; the same values stored as bfloat16 panels must give the float panels'
// bits, on every row count (the one-row and few-row streaming kernels, the tiles reading
// bfloat16 in place, and from 24 rows the tiles reading strips widened once).
TEST_P(vector_path, bfloat16_panels_give_the_float_panels_bits) {
  gpt2::ThreadPool pool(2);
  for (const Shape shape : {Shape{13, 37, 117}, Shape{13, 1, 83}, Shape{13, 64, 64},
                            Shape{8, 2103, 85}, Shape{27, 70, 150}, Shape{26, 2103, 70}}) {
    auto w = values(40, static_cast<size_t>(shape.n_in) * shape.n_out);
    for (float& v : w) {
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      bits &= 0xffff0000u;
      std::memcpy(&v, &bits, sizeof v);
    }
    const auto b = values(41, shape.n_out);
    std::vector<float> storage;
    const gpt2::kernels::Matrix fp32 = panels(w, shape.n_in, shape.n_out, storage);
    std::vector<uint16_t> halves(storage.size());
    ASSERT_TRUE(gpt2::kernels::to_bf16(storage.data(), storage.size(), halves.data()));
    gpt2::kernels::Matrix bf16{nullptr, shape.n_in, shape.n_out, true, halves.data()};
    for (int rows = 1; rows <= shape.rows; ++rows) {
      const auto x = values(42, static_cast<size_t>(rows) * shape.n_in);
      const auto y0 = values(43, static_cast<size_t>(rows) * shape.n_out);
      for (Epilogue e : {Epilogue::store, Epilogue::gelu, Epilogue::add}) {
        std::vector<float> want = y0;
        gpt2::kernels::matmul(x.data(), rows, fp32, b.data(), want.data(), e, nullptr);
        for (gpt2::ThreadPool* p : {static_cast<gpt2::ThreadPool*>(nullptr), &pool}) {
          std::vector<float> got = y0;
          gpt2::kernels::matmul(x.data(), rows, bf16, b.data(), got.data(), e, p);
          ASSERT_TRUE(same_bits(got, want, shape.n_out))
              << rows << " x " << shape.n_in << " x " << shape.n_out << ", epilogue "
              << static_cast<int>(e) << ", pool " << (p != nullptr);
        }
        std::vector<float> plain = y0;
        gpt2::kernels::matmul_plain(x.data(), rows, bf16, b.data(), plain.data(), e);
        ASSERT_TRUE(same_bits(plain, want, shape.n_out)) << "matmul_plain, " << rows << " rows";
      }
    }
  }
}

TEST(kernels, to_bf16_refuses_a_value_that_is_not_a_bfloat16) {
  const float exact[] = {1.0f, -2.5f, 0.0f, 0x1p100f};
  uint16_t out[4];
  ASSERT_TRUE(gpt2::kernels::to_bf16(exact, 4, out));
  EXPECT_EQ(out[0], 0x3f80);
  EXPECT_EQ(out[1], 0xc020);
  const float inexact[] = {1.0f, 0.1f};
  EXPECT_FALSE(gpt2::kernels::to_bf16(inexact, 2, out));
}

// Floats that take every branch of gelu's tanh and of exp: zeros, NaN, infinities, tiny
// and huge values, the branch limits and their neighbours, and a sweep over all exponents.
std::vector<float> special_and_swept_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,    -0.0f,    inf,     -inf,    std::nanf(""), 1e-45f, -1e-45f,
                          1e-30f,  -3.0e38f, 3.0e38f, 89.0f,   -110.0f,       88.72f, -103.97f,
                          0x1p-6f, 10.0f,    -10.0f,  0x1p-7f, 0.0156249f,    4.0f,   -4.0f,
                          12.5f,   -0.001f,  0.5f,    -87.3f};
  for (float base : {89.0f, -110.0f, 0x1p-6f, 10.0f, -10.0f}) {
    v.push_back(std::nextafter(base, inf));
    v.push_back(std::nextafter(base, -inf));
  }
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 40009) {
    const uint32_t u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, sizeof f);
    v.push_back(f);
  }
  return v;
}

// With n_in = 1, x = 1 and no bias, each output's sum is 0 + 1 * w[0][j] = w[0][j] (a -0
// becomes +0), so the GELU epilogue of the tiles sees any value we choose.
TEST_P(vector_path, gelu_of_the_tiles_equals_the_scalar_gelu) {
  const std::vector<float> w = special_and_swept_floats();
  const int n_out = static_cast<int>(w.size()), rows = 4;
  const std::vector<float> x(rows, 1.0f);
  std::vector<float> want(static_cast<size_t>(rows) * n_out), got(want.size());
  gpt2::kernels::matmul_plain(x.data(), rows, row_major(w, 1, n_out), nullptr, want.data(),
                              Epilogue::gelu);
  gpt2::kernels::matmul(x.data(), rows, row_major(w, 1, n_out), nullptr, got.data(), Epilogue::gelu,
                        nullptr);
  EXPECT_TRUE(same_bits(got, want, n_out));
}

TEST_P(vector_path, exp_shifted_equals_gpt2_exp) {
  const std::vector<float> v = special_and_swept_floats();
  for (float shift : {0.0f, 1.5f, -inf_float(), std::nanf("")}) {
    for (int n : {static_cast<int>(v.size()), 1, 7, 21, 0}) {
      std::vector<float> want(v.begin(), v.begin() + n), got = want;
      for (float& f : want) f = gpt2::exp(f - shift);
      gpt2::kernels::exp_shifted(got.data(), n, shift);
      ASSERT_TRUE(same_bits(got, want, 1)) << "shift " << shift << ", n " << n;
    }
  }
}

// Widths around the vector and block sizes (4, 16, 64 floats), odd strides and lengths.
TEST_P(vector_path, weighted_sum_is_the_documented_loop) {
  for (int dim : {1, 3, 4, 15, 16, 17, 33, 63, 64, 65, 80, 131}) {
    for (int n : {0, 1, 2, 9, 40}) {
      const int stride = dim + 7;
      const auto p = values(40, n), rows = values(41, static_cast<size_t>(n) * stride + 1);
      std::vector<float> want(dim), got(dim, -1.0f);
      for (int d = 0; d < dim; ++d) {
        float s = 0.0f;
        for (int j = 0; j < n; ++j) s = s + p[j] * rows[static_cast<size_t>(j) * stride + d];
        want[d] = s;
      }
      gpt2::weighted_sum(p.data(), rows.data(), n, stride, dim, got.data());
      ASSERT_TRUE(same_bits(got, want, dim)) << "dim " << dim << ", n " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(kernels, vector_path,
                         testing::Values(VectorPath::sse2, VectorPath::avx2, VectorPath::avx512),
                         [](const testing::TestParamInfo<VectorPath>& info) {
                           return std::string(gpt2::kernels::vector_path_name(info.param));
                         });

TEST(kernels, attention_scores_equal_dot_times_scale) {
  const int n = 23, stride = 40, dim = 17;
  const auto q = values(17, dim), k = values(18, n * stride);
  const float scale = gpt2::attention_scale(dim);
  std::vector<float> got(n), want(n);
  gpt2::detail::attention_scores(q.data(), k.data(), n, stride, dim, scale, got.data());
  for (int j = 0; j < n; ++j) want[j] = gpt2::dot(q.data(), k.data() + j * stride, dim) * scale;
  EXPECT_TRUE(same_bits(got, want, n));
}

}  // namespace
