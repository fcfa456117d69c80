// The model's internal number crunching: the Conv1D matrix product, layer norm and GELU.
// Model (gpt2.cpp) calls these; a learner calls the Model methods instead.
//
// Every function fixes, for every output, the exact sequence of float operations
// (DETERMINISM.md, "Matrix products", "Layer norm", "GELU"). How the work is blocked,
// vectorized, laid out in memory or split over threads changes only which outputs are
// computed together, never the operations that produce one output.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpt2 {

class ThreadPool;

namespace kernels {

// Width of a column panel (see Matrix).
constexpr int PANEL = 32;

// A weight matrix W of shape [n_in, n_out] (Conv1D orientation: input index first), in one
// of two layouts:
//   row-major (panels == false): W[k][j] at data[k * n_out + j]; how a safetensors file
//     stores it, so mapped F32 weights are used in place.
//   column panels (panels == true): columns [PANEL*p, PANEL*p + PANEL) form panel p, a
//     contiguous [n_in][PANEL] block; W[k][j] at
//     data[(j / PANEL) * n_in * PANEL + k * PANEL + j % PANEL]; the last panel is padded
//     with zeros. A one-row product then reads each thread's share of W front to back.
//   bfloat16 panels (bf16 != nullptr, panels == true, data unused): the panel layout, each
//     value kept as the top 16 bits of its float (bfloat16), for a matrix whose every
//     value is exactly a bfloat16 (to_bf16 checks). Widening is exact, so the products
//     are the same sums of the same values: the same bits, from half the bytes.
struct Matrix {
  const float* data = nullptr;
  int n_in = 0;
  int n_out = 0;
  bool panels = false;
  const uint16_t* bf16 = nullptr;

  float at(int k, int j) const;
};

// Floats a panel-layout copy of an [n_in, n_out] matrix takes (padding included).
size_t panel_floats(int n_in, int n_out);
// Index of W[k][j] in the panel layout.
size_t panel_index(int n_in, int k, int j);
// Copies a row-major matrix into the panel layout (out: panel_floats(n_in, n_out) floats).
void to_panels(const float* row_major, int n_in, int n_out, float* out);
// out[i] = the top 16 bits of values[i], for i < n: their bfloat16 form. False, with out
// unfinished, when some value is not exactly a bfloat16 (its low 16 bits are not 0).
bool to_bf16(const float* values, size_t n, uint16_t* out);

// What to do with a finished sum s = bias[j] + sum_k x[r][k] * W[k][j]:
enum class Epilogue {
  store,  // y[r][j] = s
  gelu,   // y[r][j] = gelu(s)
  add,    // y[r][j] = y[r][j] + s      (a residual connection)
};

// y = x . W (+ bias), for each output:
//   s = bias[j] (or 0.0f if bias is nullptr); for k = 0 .. n_in-1 in order: s = s + x[r][k] *
//   W[k][j]
// then the epilogue.   x: [n_rows, w.n_in], bias: [w.n_out], y: [n_rows, w.n_out].
// Columns are split over the pool's threads (pool may be nullptr).
void matmul(const float* x, int n_rows, const Matrix& w, const float* bias, float* y,
            Epilogue epilogue, ThreadPool* pool);

// x[i] = gpt2::exp(x[i] - shift) for i < n (softmax's exponentials), several at a time.
void exp_shifted(float* x, int n, float shift);

// gpt2::weighted_sum (ops.hpp), several outputs at a time: for d < dim,
//   out[d] = 0; for j = 0 .. n-1: out[d] = out[d] + p[j] * rows[j * stride + d]
void weighted_sum(const float* p, const float* rows, int n, int stride, int dim, float* out);

// The vector instructions of matmul's many-row path (4 rows or more), exp_shifted and
// weighted_sum:
// every path gives the same bits (each vector lane performs one output's scalar
// operations); they differ in speed.
enum class VectorPath {
  sse2,    // vectors of 4 floats (SSE2, part of every x86-64; the only path elsewhere)
  avx2,    // vectors of 8 floats
  avx512,  // vectors of 16 floats (AVX-512F)
};
// Whether this CPU (and its OS) can run `path`.
bool cpu_has(VectorPath path);
// The path matmul uses: the widest this CPU has, unless set_vector_path chose another.
VectorPath vector_path();
// Makes matmul use `path` from now on, in every thread (for tests and `kvc bench`);
// throws gpt2::ModelError if the CPU cannot run it.
void set_vector_path(VectorPath path);
const char* vector_path_name(VectorPath path);  // "sse2", "avx2", "avx512"

// The same sums, one output at a time with no blocking or vectors: a slow reference for
// the tests, which check that matmul gives identical bits.
void matmul_plain(const float* x, int n_rows, const Matrix& w, const float* bias, float* y,
                  Epilogue epilogue);

// Layer norm of one row x[0..n-1] into y (eps 1e-5), see DETERMINISM.md:
//   mean = (sum x[i] in order, from 0) / n
//   var  = (sum (x[i] - mean)^2 in order, from 0) / n
//   rstd = 1 / sqrt(var + 1e-5f)            (IEEE sqrt, then a division)
//   y[i] = ((x[i] - mean) * rstd) * weight[i] + bias[i]
void layer_norm(const float* x, const float* weight, const float* bias, int n, float* y);

// Layer norm of n_rows rows of width n (each row exactly layer_norm); rows split over the
// pool's threads.
void layer_norm_rows(const float* x, const float* weight, const float* bias, int n_rows, int n,
                     float* y, ThreadPool* pool);

// GPT-2's GELU, tanh approximation, in this order of float operations:
//   x3 = (x * x) * x
//   u  = 0.7978845608f * (x + 0.044715f * x3)      (0.7978845608 ~ sqrt(2/pi))
//   y  = (0.5f * x) * (1.0f + gpt2::tanh(u))
float gelu(float x);

}  // namespace kernels
}  // namespace gpt2
