// Matrix product, layer norm and GELU (see kernels.hpp for the arithmetic each performs).
//
// matmul has three code paths that give identical bits:
//   - few rows, panel weights (a decode step on synthetic weights): each thread reads its
//     panels front to back, the running sums of 32 columns in registers;
//   - few rows, row-major weights (mapped safetensors): stream through w row by row, the
//     running sums of a chunk of columns in an L1-resident buffer, rows prefetched ahead;
//   - many rows (prefill, forward): copy a block of w's columns into contiguous 8-column
//     strips and run a register-blocked kernel (6 rows x 8 columns of running sums).
// All add the products x[r][k] * w[k][j] to each output's sum for k = 0, 1, 2, ... in
// order; vectors only ever hold sums of different outputs side by side.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "numerics.hpp"
#include "ops.hpp"
#include "threads.hpp"

namespace gpt2::kernels {

namespace {

using numerics::load4;
using numerics::splat4;
using numerics::store4;
using numerics::v4f;

inline void apply(float* y, float s, Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::store:
      *y = s;
      break;
    case Epilogue::gelu:
      *y = gelu(s);
      break;
    case Epilogue::add:
      *y = *y + s;
      break;
  }
}

inline void apply4(float* y, v4f s, Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::store:
      store4(y, s);
      break;
    case Epilogue::gelu:
      for (int i = 0; i < 4; ++i) y[i] = gelu(s[i]);
      break;
    case Epilogue::add:
      store4(y, load4(y) + s);
      break;
  }
}

// One output computed alone: the definition every other path must agree with.
inline float one_sum(const float* x_row, const Matrix& w, const float* bias, int j) {
  float s = bias ? bias[j] : 0.0f;
  for (int k = 0; k < w.n_in; ++k) s = s + x_row[k] * w.at(k, j);
  return s;
}

// ---- few rows, row-major weights: stream through w row by row -----------------------

constexpr int STREAM_CHUNK = 2048;     // columns whose running sums stay in L1 (8 KiB a row)
constexpr int PREFETCH_BYTES = 16384;  // how far ahead of the reads to prefetch

template <int R>
void stream_rows(const float* x, const Matrix& w, const float* bias, int j0, int j1, float* y,
                 Epilogue epilogue) {
  const int n_in = w.n_in, n_out = w.n_out;
  alignas(64) float acc[R][STREAM_CHUNK];
  // Equal chunks of at most STREAM_CHUNK columns (multiples of 8 but for the last).
  const int n_chunks = (j1 - j0 + STREAM_CHUNK - 1) / STREAM_CHUNK;
  const int chunk = ((j1 - j0 + n_chunks - 1) / n_chunks + 7) / 8 * 8;
  for (int jc = j0; jc < j1; jc += chunk) {
    const int c = std::min(chunk, j1 - jc);
    const int c8 = c / 8 * 8;
    for (int r = 0; r < R; ++r) {
      for (int j = 0; j < c; ++j) acc[r][j] = bias ? bias[jc + j] : 0.0f;
    }
    // A chunk of a row is short and the rows are far apart, which the hardware
    // prefetchers follow poorly: ask for the lines of a row ahead explicitly.
    const int ahead = std::max(1, PREFETCH_BYTES / (c * static_cast<int>(sizeof(float))));
    for (int k = 0; k < n_in; ++k) {
      const float* wk = w.data + static_cast<size_t>(k) * n_out + jc;
      if (k + ahead < n_in) {
        const float* next = wk + static_cast<size_t>(ahead) * n_out;
        for (int j = 0; j < c; j += 16) __builtin_prefetch(next + j, 0, 3);
      }
      float xs[R];
      v4f xv[R];
      for (int r = 0; r < R; ++r) {
        xs[r] = x[static_cast<size_t>(r) * n_in + k];
        xv[r] = splat4(xs[r]);
      }
      for (int j = 0; j < c8; j += 8) {
        const v4f w0 = load4(wk + j);
        const v4f w1 = load4(wk + j + 4);
        for (int r = 0; r < R; ++r) {
          store4(&acc[r][j], load4(&acc[r][j]) + xv[r] * w0);
          store4(&acc[r][j + 4], load4(&acc[r][j + 4]) + xv[r] * w1);
        }
      }
      for (int j = c8; j < c; ++j) {
        for (int r = 0; r < R; ++r) acc[r][j] = acc[r][j] + xs[r] * wk[j];
      }
    }
    for (int r = 0; r < R; ++r) {
      float* yr = y + static_cast<size_t>(r) * n_out + jc;
      for (int j = 0; j < c; ++j) apply(yr + j, acc[r][j], epilogue);
    }
  }
}

// ---- few rows, panel weights: each panel read front to back, sums in registers -------

// Columns off .. off + 4*NV - 1 of one panel (starting at column jb), rows 0 .. R-1.
// bias32: the panel's biases, zero-padded to PANEL, or nullptr.
template <int R, int NV>
void panel_block(const float* x, int n_in, const float* panel, int off, const float* bias32,
                 float* y, int n_out, int jb, int valid, Epilogue epilogue) {
  v4f acc[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < NV; ++i) {
    const v4f b = bias32 ? load4(bias32 + off + 4 * i) : splat4(0.0f);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][i] = b;
  }
  for (int k = 0; k < n_in; ++k) {
    const float* wk = panel + static_cast<size_t>(k) * PANEL + off;
    v4f wv[NV];
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) wv[i] = load4(wk + 4 * i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const v4f xv = splat4(x[static_cast<size_t>(r) * n_in + k]);
#pragma GCC unroll 8
      for (int i = 0; i < NV; ++i) acc[r][i] = acc[r][i] + xv * wv[i];
    }
  }
  for (int r = 0; r < R; ++r) {
    float out[4 * NV];
    for (int i = 0; i < NV; ++i) store4(out + 4 * i, acc[r][i]);
    float* yr = y + static_cast<size_t>(r) * n_out + jb;
    for (int j = 0; j < 4 * NV && off + j < valid; ++j) apply(yr + off + j, out[j], epilogue);
  }
}

template <int R>
void stream_panels(const float* x, const Matrix& w, const float* bias, int p0, int p1, float* y,
                   Epilogue epilogue) {
  // One row: all 32 columns of a panel at once (8 vectors of sums). More rows: two halves
  // of 16 columns, so that the sums still fit in the 16 SSE registers.
  constexpr int NV = R == 1 ? 8 : 4;
  for (int p = p0; p < p1; ++p) {
    const int jb = p * PANEL;
    const int valid = std::min(PANEL, w.n_out - jb);
    alignas(16) float bias32[PANEL] = {};
    if (bias) {
      for (int j = 0; j < valid; ++j) bias32[j] = bias[jb + j];
    }
    const float* panel = w.data + static_cast<size_t>(p) * w.n_in * PANEL;
    for (int off = 0; off < valid; off += 4 * NV) {
      panel_block<R, NV>(x, w.n_in, panel, off, bias ? bias32 : nullptr, y, w.n_out, jb, valid,
                         epilogue);
    }
  }
}

// ---- many rows: packed column strips and a register-blocked kernel -------------------

// 6 x 8 running sums: 12 of the 16 SSE registers, the rest for the weights and x.
constexpr int TILE_ROWS = 6;            // rows of running sums in registers
constexpr int TILE_VECS = 2;            // 4-float vectors of columns in registers
constexpr int STRIP = 4 * TILE_VECS;    // columns of one packed strip
constexpr int PACK_BYTES = 256 * 1024;  // one block of packed strips, sized for L2

// Running sums of RT rows x STRIP columns in registers; strip is [n_in][STRIP], contiguous.
template <int RT>
void tile_kernel(const float* x, int n_in, const float* strip, const float* bias, float* y,
                 int n_out, Epilogue epilogue) {
  v4f acc[RT][TILE_VECS];
#pragma GCC unroll 4
  for (int i = 0; i < TILE_VECS; ++i) {
    const v4f b = bias ? load4(bias + 4 * i) : splat4(0.0f);
#pragma GCC unroll 8
    for (int r = 0; r < RT; ++r) acc[r][i] = b;
  }
  const float* xr[RT];
  for (int r = 0; r < RT; ++r) xr[r] = x + static_cast<size_t>(r) * n_in;
  for (int k = 0; k < n_in; ++k) {
    v4f wv[TILE_VECS];
#pragma GCC unroll 4
    for (int i = 0; i < TILE_VECS; ++i)
      wv[i] = load4(strip + STRIP * static_cast<size_t>(k) + 4 * i);
#pragma GCC unroll 8
    for (int r = 0; r < RT; ++r) {
      const v4f xv = splat4(xr[r][k]);
#pragma GCC unroll 4
      for (int i = 0; i < TILE_VECS; ++i) acc[r][i] = acc[r][i] + xv * wv[i];
    }
  }
  for (int r = 0; r < RT; ++r) {
    for (int i = 0; i < TILE_VECS; ++i) {
      apply4(y + static_cast<size_t>(r) * n_out + 4 * i, acc[r][i], epilogue);
    }
  }
}

template <int RT = TILE_ROWS>
void tile_dispatch(int rows, const float* x, int n_in, const float* strip, const float* bias,
                   float* y, int n_out, Epilogue epilogue) {
  if constexpr (RT > 1) {
    if (rows < RT) return tile_dispatch<RT - 1>(rows, x, n_in, strip, bias, y, n_out, epilogue);
  }
  tile_kernel<RT>(x, n_in, strip, bias, y, n_out, epilogue);
}

// Columns j .. j+3 of row k, contiguous in both layouts (j a multiple of 4).
inline const float* cols4(const Matrix& w, int k, int j) {
  return w.panels ? w.data + panel_index(w.n_in, k, j)
                  : w.data + static_cast<size_t>(k) * w.n_out + j;
}

void packed_columns(const float* x, int n_rows, const Matrix& w, const float* bias, int j0, int j1,
                    float* y, Epilogue epilogue) {
  const int n_in = w.n_in, n_out = w.n_out;
  thread_local std::vector<float> packed;
  // [j0, js) in strips of STRIP columns, [js, j1) one output at a time.
  const int js = j0 + (j1 - j0) / STRIP * STRIP;
  const int block_cols = std::max(
      STRIP, static_cast<int>(PACK_BYTES / sizeof(float)) / std::max(1, n_in) / STRIP * STRIP);
  if (packed.size() < static_cast<size_t>(block_cols) * n_in) {
    packed.resize(static_cast<size_t>(block_cols) * n_in);
  }
  for (int jb = j0; jb < js; jb += block_cols) {
    const int nc = std::min(block_cols, js - jb);
    // packed[p][k][0 .. STRIP-1] = W[k][jb + STRIP*p .. jb + STRIP*p + STRIP-1]
    for (int p = 0; p < nc / STRIP; ++p) {
      float* dst = packed.data() + static_cast<size_t>(p) * n_in * STRIP;
      for (int k = 0; k < n_in; ++k) {
        for (int i = 0; i < TILE_VECS; ++i) {
          store4(dst + STRIP * static_cast<size_t>(k) + 4 * i,
                 load4(cols4(w, k, jb + STRIP * p + 4 * i)));
        }
      }
    }
    for (int r0 = 0; r0 < n_rows; r0 += TILE_ROWS) {
      const int rows = std::min(TILE_ROWS, n_rows - r0);
      for (int p = 0; p < nc / STRIP; ++p) {
        const int j = jb + STRIP * p;
        tile_dispatch(rows, x + static_cast<size_t>(r0) * n_in, n_in,
                      packed.data() + static_cast<size_t>(p) * n_in * STRIP,
                      bias ? bias + j : nullptr, y + static_cast<size_t>(r0) * n_out + j, n_out,
                      epilogue);
      }
    }
  }
  for (int r = 0; r < n_rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * n_in;
    for (int j = js; j < j1; ++j) {
      apply(y + static_cast<size_t>(r) * n_out + j, one_sum(xr, w, bias, j), epilogue);
    }
  }
}

// Columns [j0, j1) of y (j0 a multiple of PANEL).
void matmul_columns(const float* x, int n_rows, const Matrix& w, const float* bias, int j0, int j1,
                    float* y, Epilogue epilogue) {
  // Up to 3 rows at a time through a streaming kernel; 4 or more through the packed one.
  if (n_rows >= 4) return packed_columns(x, n_rows, w, bias, j0, j1, y, epilogue);
  if (w.panels) {
    const int p0 = j0 / PANEL, p1 = (j1 + PANEL - 1) / PANEL;
    switch (n_rows) {
      case 3:
        return stream_panels<3>(x, w, bias, p0, p1, y, epilogue);
      case 2:
        return stream_panels<2>(x, w, bias, p0, p1, y, epilogue);
      case 1:
        return stream_panels<1>(x, w, bias, p0, p1, y, epilogue);
      default:
        return;
    }
  }
  switch (n_rows) {
    case 3:
      return stream_rows<3>(x, w, bias, j0, j1, y, epilogue);
    case 2:
      return stream_rows<2>(x, w, bias, j0, j1, y, epilogue);
    case 1:
      return stream_rows<1>(x, w, bias, j0, j1, y, epilogue);
    default:
      return;
  }
}

}  // namespace

float Matrix::at(int k, int j) const {
  return panels ? data[panel_index(n_in, k, j)] : data[static_cast<size_t>(k) * n_out + j];
}

size_t panel_floats(int n_in, int n_out) {
  return static_cast<size_t>((n_out + PANEL - 1) / PANEL) * n_in * PANEL;
}

size_t panel_index(int n_in, int k, int j) {
  return static_cast<size_t>(j / PANEL) * n_in * PANEL + static_cast<size_t>(k) * PANEL + j % PANEL;
}

void to_panels(const float* row_major, int n_in, int n_out, float* out) {
  const int n_panels = (n_out + PANEL - 1) / PANEL;
  for (int p = 0; p < n_panels; ++p) {
    const int valid = std::min(PANEL, n_out - p * PANEL);
    for (int k = 0; k < n_in; ++k) {
      float* dst = out + panel_index(n_in, k, p * PANEL);
      const float* src = row_major + static_cast<size_t>(k) * n_out + p * PANEL;
      for (int j = 0; j < PANEL; ++j) dst[j] = j < valid ? src[j] : 0.0f;
    }
  }
}

float gelu(float x) {
  const float x3 = x * x * x;
  const float u = 0.7978845608f * (x + 0.044715f * x3);
  return 0.5f * x * (1.0f + gpt2::tanh(u));
}

void matmul(const float* x, int n_rows, const Matrix& w, const float* bias, float* y,
            Epilogue epilogue, ThreadPool* pool) {
  if (n_rows <= 0 || w.n_out <= 0) return;
  // Threads take contiguous column ranges, whole panels (multiples of PANEL columns).
  const int n_panels = (w.n_out + PANEL - 1) / PANEL;
  const int max_tasks = pool ? pool->size() : 1;
  const int per_task = (n_panels + max_tasks - 1) / max_tasks * PANEL;
  const int n_tasks = (w.n_out + per_task - 1) / per_task;
  auto task = [&](int t, int) {
    const int j0 = t * per_task;
    const int j1 = std::min(w.n_out, j0 + per_task);
    matmul_columns(x, n_rows, w, bias, j0, j1, y, epilogue);
  };
  if (pool && n_tasks > 1) {
    pool->run(n_tasks, task);
  } else {
    for (int t = 0; t < n_tasks; ++t) task(t, 0);
  }
}

void matmul_plain(const float* x, int n_rows, const Matrix& w, const float* bias, float* y,
                  Epilogue epilogue) {
  for (int r = 0; r < n_rows; ++r) {
    for (int j = 0; j < w.n_out; ++j) {
      apply(y + static_cast<size_t>(r) * w.n_out + j,
            one_sum(x + static_cast<size_t>(r) * w.n_in, w, bias, j), epilogue);
    }
  }
}

void layer_norm(const float* x, const float* weight, const float* bias, int n, float* y) {
  const float n_f = static_cast<float>(n);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / n_f;
  float sq = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float d = x[i] - mean;
    sq += d * d;
  }
  const float var = sq / n_f;
  const float rstd = 1.0f / std::sqrt(var + 1e-5f);
  for (int i = 0; i < n; ++i) y[i] = ((x[i] - mean) * rstd) * weight[i] + bias[i];
}

void layer_norm_rows(const float* x, const float* weight, const float* bias, int n_rows, int n,
                     float* y, ThreadPool* pool) {
  auto rows = [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      layer_norm(x + static_cast<size_t>(r) * n, weight, bias, n, y + static_cast<size_t>(r) * n);
    }
  };
  const int n_tasks = pool ? std::min(pool->size(), n_rows / 8) : 1;
  if (n_tasks <= 1) return rows(0, n_rows);
  const int per = (n_rows + n_tasks - 1) / n_tasks;
  pool->run(n_tasks, [&](int t, int) { rows(t * per, std::min(n_rows, (t + 1) * per)); });
}

}  // namespace gpt2::kernels
