// Matrix product, layer norm and GELU (see kernels.hpp for the arithmetic each performs).
//
// matmul has three code paths that give identical bits:
//   - few rows, panel weights (a decode step on synthetic weights; with AVX2 or AVX-512
//     one row of float panels only, two and three rows and bfloat16 panels take the
//     register tiles): each thread reads its panels front to back, the running sums of 32
//     columns in registers;
//   - few rows, row-major weights (mapped safetensors): stream through w row by row, the
//     running sums of a chunk of columns in an L1-resident buffer, rows prefetched ahead;
//   - many rows (prefill, forward): register tiles of 6 rows x (2 or 4 vectors) of
//     running sums, over a strip of columns read in place (panels) or copied (row-major),
//     k in blocks of at most 1024 (the sums stored and reloaded exactly between blocks),
//     in one of three vector paths chosen for the CPU at run time: SSE2 (6 x 8 sums),
//     AVX2 (6 x 16), AVX-512 (6 x 64). Each path's function is compiled for its
//     instruction set by a target attribute; separate multiplies and adds, never FMA
//     (-ffp-contract=off holds inside them too).
// All add the products x[r][k] * w[k][j] to each output's sum for k = 0, 1, 2, ... in
// order; vectors only ever hold sums of different outputs side by side, so every path
// and every vector width gives the same bits. Panels may hold bfloat16 values (Matrix):
// each is widened to its float exactly before its product, so they give the bits of
// float panels holding the same values.
#include "kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "gpt2.hpp"
#include "lanes.hpp"
#include "numerics.hpp"
#include "ops.hpp"
#include "threads.hpp"

namespace gpt2::kernels {

namespace {

using numerics::load4;
using numerics::splat4;
using numerics::store4;
using numerics::v4f;

// Four bfloat16 values widened to floats (exact).
inline v4f load4(const uint16_t* p) {
  v4f v;
  lanes::load(v, p);
  return v;
}

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

// A panel matrix's values as stored: floats, or bfloat16 (uint16_t).
template <class T>
inline const T* weights(const Matrix& w) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    return w.bf16;
  } else {
    return w.data;
  }
}

// Columns off .. off + 4*NV - 1 of one panel (starting at column jb), rows 0 .. R-1.
// bias32: the panel's biases, zero-padded to PANEL, or nullptr. T: float, or uint16_t for
// bfloat16 panels.
template <int R, int NV, class T>
void panel_block(const float* x, int n_in, const T* panel, int off, const float* bias32,
                 float* y, int n_out, int jb, int valid, Epilogue epilogue) {
  v4f acc[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < NV; ++i) {
    const v4f b = bias32 ? load4(bias32 + off + 4 * i) : splat4(0.0f);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][i] = b;
  }
  for (int k = 0; k < n_in; ++k) {
    const T* wk = panel + static_cast<size_t>(k) * PANEL + off;
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

template <int R, class T>
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
    const T* panel = weights<T>(w) + static_cast<size_t>(p) * w.n_in * PANEL;
    for (int off = 0; off < valid; off += 4 * NV) {
      panel_block<R, NV, T>(x, w.n_in, panel, off, bias ? bias32 : nullptr, y, w.n_out, jb, valid,
                         epilogue);
    }
  }
}

// ---- many rows: register tiles of running sums, one instruction set per path -----------

using lanes::width;

// Rows of running sums in registers: 6 rows x NV vectors, NV = 2 with 4-float (SSE2: 12 of
// 16 registers) and 8-float vectors (AVX2: 12 of 16), NV = 4 with 16-float vectors
// (AVX-512: 24 of 32). The other registers hold the weights of the current k and a product.
constexpr int TILE_ROWS = 6;

// The columns of one tile: vector i (width<V> columns) has its row k at col[i] + k * ldw.
template <int NV, class T>
struct Strip {
  const T* col[NV];
  size_t ldw;
};

// What to do with a vector of finished sums (see Epilogue), lane by lane.
template <class V>
GPT2_LANES_INLINE void finish(float* y, V s, Epilogue epilogue) {
  V out = s;
  if (epilogue == Epilogue::gelu) out = lanes::gelu_lanes(s);
  if (epilogue == Epilogue::add) {
    lanes::load(out, y);
    out = out + s;
  }
  lanes::store(y, out);
}

// Where a tile's running sums start and where they go. The sums of one pass over k0 .. k1-1
// continue those of the pass before (stored as floats and loaded back, so exactly the same
// values), which lets a long k range be cut into blocks whose weights stay in cache.
struct Sums {
  const float* from;  // [RT][from_ld]: the sums so far; nullptr: zeros (no bias)
  size_t from_ld;     // 0: the same row (the bias) for every row of the tile
  float* to;          // [RT][to_ld]
  size_t to_ld;       // row stride of `to` (never 0: each row has its own outputs)
  bool last;          // k1 == n_in: apply the epilogue; else store the sums as they are
};

// Outputs of RT rows x (NV * width<V>) columns: each lane of acc[r][i] is one output's sum
//   s = bias[j]; for k = 0 .. n_in-1: s = s + x[r][k] * w[k][j]
// here the part k0 .. k1-1 of it. x: [RT, n_in]; w's column j is the tile's first.
template <class V, int RT, int NV, class T>
GPT2_LANES_INLINE void tile(const float* x, int n_in, int k0, int k1, const Strip<NV, T>& w,
                            const Sums& sums, Epilogue epilogue) {
  constexpr int L = width<V>;
  V acc[RT][NV];
  for (int r = 0; r < RT; ++r) {
    for (int i = 0; i < NV; ++i) {
      acc[r][i] = V{};
      if (sums.from) lanes::load(acc[r][i], sums.from + r * sums.from_ld + L * i);
    }
  }
  for (int k = k0; k < k1; ++k) {
    V wv[NV];
#pragma GCC unroll 4
    for (int i = 0; i < NV; ++i) lanes::load(wv[i], w.col[i] + k * w.ldw);
#pragma GCC unroll 6
    for (int r = 0; r < RT; ++r) {
      const float xs = x[static_cast<size_t>(r) * n_in + k];
#pragma GCC unroll 4
      for (int i = 0; i < NV; ++i) acc[r][i] = acc[r][i] + xs * wv[i];
    }
  }
  for (int r = 0; r < RT; ++r) {
    for (int i = 0; i < NV; ++i) {
      float* to = sums.to + r * sums.to_ld + L * i;
      if (sums.last) {
        finish(to, acc[r][i], epilogue);
      } else {
        lanes::store(to, acc[r][i]);
      }
    }
  }
}

// A tile of `rows` rows (1 .. TILE_ROWS).
template <class V, int NV, class T, int RT = TILE_ROWS>
GPT2_LANES_INLINE void tile_rows(int rows, const float* x, int n_in, int k0, int k1,
                                 const Strip<NV, T>& w, const Sums& sums, Epilogue epilogue) {
  if constexpr (RT > 1) {
    if (rows < RT) return tile_rows<V, NV, T, RT - 1>(rows, x, n_in, k0, k1, w, sums, epilogue);
  }
  tile<V, RT, NV, T>(x, n_in, k0, k1, w, sums, epilogue);
}

// Columns j .. j + NV*width<V> - 1 of w, as the tiles read them (U). Panel weights stored
// as U are read where they are (a vector never crosses a panel). Otherwise the strip is
// copied into `pack` as [n_in][NV*width<V>] floats: row-major floats, or bfloat16 panels
// widened (exactly), once for all the row tiles that pass over the strip.
// T: how w stores its values (float, or uint16_t for bfloat16, which are always panels).
template <class V, int NV, class T, class U>
GPT2_LANES_INLINE Strip<NV, U> strip_at(const Matrix& w, int j, std::vector<float>& pack) {
  constexpr int L = width<V>, SW = NV * L;
  Strip<NV, U> s;
  if constexpr (std::is_same_v<T, U>) {
    if (w.panels) {
      for (int i = 0; i < NV; ++i) s.col[i] = weights<T>(w) + panel_index(w.n_in, 0, j + L * i);
      s.ldw = PANEL;
      return s;
    }
  }
  if constexpr (std::is_same_v<U, float>) {
    if (pack.size() < static_cast<size_t>(w.n_in) * SW) pack.resize(static_cast<size_t>(w.n_in) * SW);
    for (int k = 0; k < w.n_in; ++k) {
      float* dst = pack.data() + static_cast<size_t>(k) * SW;
      for (int i = 0; i < NV; ++i) {
        V v;
        if constexpr (std::is_same_v<T, uint16_t>) {
          lanes::load(v, w.bf16 + panel_index(w.n_in, k, j + L * i));
        } else {
          lanes::load(v, w.data + static_cast<size_t>(k) * w.n_out + j + L * i);
        }
        lanes::store(dst + L * i, v);
      }
    }
    for (int i = 0; i < NV; ++i) s.col[i] = pack.data() + L * i;
    s.ldw = SW;
  }
  return s;  // U = uint16_t is only asked of bfloat16 panels, read in place above
}

// Longest k range one pass of the tiles covers: a strip of 64 columns then takes 256 KiB,
// which stays in a 1 MiB L2 cache while the row tiles pass over it.
constexpr int K_BLOCK = 1024;

// Columns [j0, j1) of y for all n_rows rows: strips of NV vectors (each strip's weights,
// a k block at a time, stay in cache while every row tile passes over them), then the
// rest with narrower strips, then one output at a time.
template <class V, int NV, class T, class U = T>
GPT2_LANES_INLINE void tiled_columns(const float* x, int n_rows, const Matrix& w, const float* bias,
                                     int j0, int j1, float* y, Epilogue epilogue) {
  constexpr int SW = NV * width<V>;
  const int n_in = w.n_in, n_out = w.n_out;
  const int js = j0 + (j1 - j0) / SW * SW;
  const int n_blocks = (n_in + K_BLOCK - 1) / K_BLOCK;
  const int k_block = (n_in + n_blocks - 1) / n_blocks;
  thread_local std::vector<float> pack;     // [n_in][SW] for row-major weights
  thread_local std::vector<float> partial;  // [n_rows][SW]: sums between k blocks
  if (n_blocks > 1 && partial.size() < static_cast<size_t>(n_rows) * SW) {
    partial.resize(static_cast<size_t>(n_rows) * SW);
  }
  for (int j = j0; j < js; j += SW) {
    const Strip<NV, U> strip = strip_at<V, NV, T, U>(w, j, pack);
    for (int k0 = 0; k0 < n_in; k0 += k_block) {
      const int k1 = std::min(n_in, k0 + k_block);
      for (int r0 = 0; r0 < n_rows; r0 += TILE_ROWS) {
        float* part = partial.data() + static_cast<size_t>(r0) * SW;
        Sums sums{part, SW, part, SW, k1 == n_in};
        if (k0 == 0) {
          sums.from = bias ? bias + j : nullptr;
          sums.from_ld = 0;
        }
        if (k1 == n_in) {
          sums.to = y + static_cast<size_t>(r0) * n_out + j;
          sums.to_ld = n_out;
        }
        tile_rows<V, NV, U>(std::min(TILE_ROWS, n_rows - r0), x + static_cast<size_t>(r0) * n_in, n_in,
                         k0, k1, strip, sums, epilogue);
      }
    }
  }
  if constexpr (NV > 1) {
    tiled_columns<V, NV / 2, T, U>(x, n_rows, w, bias, js, j1, y, epilogue);
  } else {
    for (int r = 0; r < n_rows; ++r) {
      const float* xr = x + static_cast<size_t>(r) * n_in;
      for (int j = js; j < j1; ++j) {
        apply(y + static_cast<size_t>(r) * n_out + j, one_sum(xr, w, bias, j), epilogue);
      }
    }
  }
}

// Bfloat16 panels with 24 rows or more (4 row tiles): the tiles read each strip widened to
// floats in `pack`, the widening done once and not once per row tile. Fewer rows read the
// bfloat16 in place. Measured, one thread, [768, 3072], time on float panels over time on
// bfloat16 ones: in place 0.96 (6 rows), 0.80 (16), 0.80 (64); widened 0.66 (7 rows),
// 0.75 (16), 0.84 (24), 0.91 (32), 1.02 (64), 1.08 (256).
template <class V, int NV>
GPT2_LANES_INLINE void tiled_bf16(const float* x, int n_rows, const Matrix& w, const float* bias,
                                  int j0, int j1, float* y, Epilogue epilogue) {
  if (n_rows >= 4 * TILE_ROWS) return tiled_columns<V, NV, uint16_t, float>(x, n_rows, w, bias, j0, j1, y, epilogue);
  tiled_columns<V, NV, uint16_t>(x, n_rows, w, bias, j0, j1, y, epilogue);
}

// One function per vector path, compiled for its instruction set.
void many_rows_sse2(const float* x, int n_rows, const Matrix& w, const float* bias, int j0, int j1,
                    float* y, Epilogue epilogue) {
  if (w.bf16) return tiled_bf16<lanes::v4f, 2>(x, n_rows, w, bias, j0, j1, y, epilogue);
  tiled_columns<lanes::v4f, 2, float>(x, n_rows, w, bias, j0, j1, y, epilogue);
}

#if GPT2_X86
__attribute__((target("avx2"))) void many_rows_avx2(const float* x, int n_rows, const Matrix& w,
                                                    const float* bias, int j0, int j1, float* y,
                                                    Epilogue epilogue) {
  if (w.bf16) return tiled_bf16<lanes::v8f, 2>(x, n_rows, w, bias, j0, j1, y, epilogue);
  tiled_columns<lanes::v8f, 2, float>(x, n_rows, w, bias, j0, j1, y, epilogue);
}

__attribute__((target("avx512f"))) void many_rows_avx512(const float* x, int n_rows,
                                                         const Matrix& w, const float* bias, int j0,
                                                         int j1, float* y, Epilogue epilogue) {
  if (w.bf16) return tiled_bf16<lanes::v16f, 4>(x, n_rows, w, bias, j0, j1, y, epilogue);
  tiled_columns<lanes::v16f, 4, float>(x, n_rows, w, bias, j0, j1, y, epilogue);
}
#endif

// ---- exp_shifted ----------------------------------------------------------------------

template <class V>
GPT2_LANES_INLINE void exp_shifted_lanes(float* x, int n, float shift) {
  int i = 0;
  for (; i + width<V> <= n; i += width<V>) {
    V v;
    lanes::load(v, x + i);
    lanes::store(x + i, lanes::exp_lanes(v - shift));
  }
  if (i == n) return;
  // The last few through one more vector, the unused lanes filled with the shift itself.
  float tail[width<V>];
  for (int l = 0; l < width<V>; ++l) tail[l] = i + l < n ? x[i + l] : shift;
  V v;
  lanes::load(v, tail);
  lanes::store(tail, lanes::exp_lanes(v - shift));
  for (int l = 0; i + l < n; ++l) x[i + l] = tail[l];
}

void exp_shifted_sse2(float* x, int n, float shift) { exp_shifted_lanes<lanes::v4f>(x, n, shift); }

#if GPT2_X86
__attribute__((target("avx2"))) void exp_shifted_avx2(float* x, int n, float shift) {
  exp_shifted_lanes<lanes::v8f>(x, n, shift);
}

__attribute__((target("avx512f"))) void exp_shifted_avx512(float* x, int n, float shift) {
  exp_shifted_lanes<lanes::v16f>(x, n, shift);
}
#endif

// ---- weighted_sum ----------------------------------------------------------------------

// NV vectors of outputs, their sums in registers while j runs over the rows.
template <class V, int NV>
GPT2_LANES_INLINE void weighted_block(const float* p, const float* rows, int n, int stride,
                                      float* out) {
  constexpr int L = width<V>;
  V acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = V{};
  for (int j = 0; j < n; ++j) {
    const float* row = rows + static_cast<size_t>(j) * stride;
    if (j + 8 < n) {  // rows of a KV cache are short and far apart: fetch ahead
      for (int i = 0; i < NV * L; i += 16) __builtin_prefetch(row + 8L * stride + i, 0, 3);
    }
#pragma GCC unroll 4
    for (int i = 0; i < NV; ++i) {
      V r;
      lanes::load(r, row + L * i);
      acc[i] = acc[i] + p[j] * r;
    }
  }
  for (int i = 0; i < NV; ++i) lanes::store(out + L * i, acc[i]);
}

// Blocks of 4 vectors of outputs, then single vectors, then one output at a time.
template <class V>
GPT2_LANES_INLINE void weighted_sum_lanes(const float* p, const float* rows, int n, int stride,
                                          int dim, float* out) {
  constexpr int L = width<V>;
  int d = 0;
  for (; d + 4 * L <= dim; d += 4 * L) weighted_block<V, 4>(p, rows + d, n, stride, out + d);
  for (; d + L <= dim; d += L) weighted_block<V, 1>(p, rows + d, n, stride, out + d);
  for (; d < dim; ++d) {
    float s = 0.0f;
    for (int j = 0; j < n; ++j) s = s + p[j] * rows[static_cast<size_t>(j) * stride + d];
    out[d] = s;
  }
}

void weighted_sum_sse2(const float* p, const float* rows, int n, int stride, int dim, float* out) {
  weighted_sum_lanes<lanes::v4f>(p, rows, n, stride, dim, out);
}

#if GPT2_X86
__attribute__((target("avx2"))) void weighted_sum_avx2(const float* p, const float* rows, int n,
                                                       int stride, int dim, float* out) {
  weighted_sum_lanes<lanes::v8f>(p, rows, n, stride, dim, out);
}

__attribute__((target("avx512f"))) void weighted_sum_avx512(const float* p, const float* rows,
                                                            int n, int stride, int dim,
                                                            float* out) {
  weighted_sum_lanes<lanes::v16f>(p, rows, n, stride, dim, out);
}
#endif

// ---- choosing the path ------------------------------------------------------------------

VectorPath widest_path() {
#if GPT2_X86
  __builtin_cpu_init();  // harmless if done already; needed if called during static init
  if (__builtin_cpu_supports("avx512f")) return VectorPath::avx512;
  if (__builtin_cpu_supports("avx2")) return VectorPath::avx2;
#endif
  return VectorPath::sse2;
}

// The path in use: the widest one, until set_vector_path changes it.
std::atomic<VectorPath>& active_path() {
  static std::atomic<VectorPath> path{widest_path()};
  return path;
}

void many_rows(const float* x, int n_rows, const Matrix& w, const float* bias, int j0, int j1,
               float* y, Epilogue epilogue) {
  switch (active_path().load(std::memory_order_relaxed)) {
#if GPT2_X86
    case VectorPath::avx512:
      return many_rows_avx512(x, n_rows, w, bias, j0, j1, y, epilogue);
    case VectorPath::avx2:
      return many_rows_avx2(x, n_rows, w, bias, j0, j1, y, epilogue);
#endif
    default:
      return many_rows_sse2(x, n_rows, w, bias, j0, j1, y, epilogue);
  }
}

// 1 to 3 rows through the streaming kernel, panels [p0, p1) of weights stored as T.
template <class T>
void stream_panel_rows(const float* x, int n_rows, const Matrix& w, const float* bias, int p0,
                       int p1, float* y, Epilogue epilogue) {
  switch (n_rows) {
    case 3:
      return stream_panels<3, T>(x, w, bias, p0, p1, y, epilogue);
    case 2:
      return stream_panels<2, T>(x, w, bias, p0, p1, y, epilogue);
    case 1:
      return stream_panels<1, T>(x, w, bias, p0, p1, y, epilogue);
    default:
      return;
  }
}

// Columns [j0, j1) of y (j0 a multiple of PANEL).
void matmul_columns(const float* x, int n_rows, const Matrix& w, const float* bias, int j0, int j1,
                    float* y, Epilogue epilogue) {
  // Up to 3 rows at a time through a streaming kernel; 4 or more through register tiles.
  if (n_rows >= 4) return many_rows(x, n_rows, w, bias, j0, j1, y, epilogue);
  // Two or three rows on panel weights with AVX2 or AVX-512: the register tiles too. On
  // them the streaming kernel's 4-float multiplies and adds, not the weights' reads, bound
  // a batch step (stage continuous-batching: 1.6 to 1.8 CPU-s to grade through it, 1.2 to
  // 1.3 through the tiles). Same sums in the same order, so the same bits. On bfloat16
  // panels one row too: half the bytes leave the streaming kernel's 4-float operations
  // (and widening) the bound (`kvc bench`, bf16_product_speedup over float panels, one
  // row: 1.23 through the streaming kernel, 2.24 to 2.33 through the AVX-512 tiles, 1.47
  // through the AVX2 tiles; SSE2 streams, 1.29).
  if ((n_rows >= 2 || w.bf16) && w.panels &&
      active_path().load(std::memory_order_relaxed) != VectorPath::sse2) {
    return many_rows(x, n_rows, w, bias, j0, j1, y, epilogue);
  }
  if (w.panels) {
    const int p0 = j0 / PANEL, p1 = (j1 + PANEL - 1) / PANEL;
    if (w.bf16) return stream_panel_rows<uint16_t>(x, n_rows, w, bias, p0, p1, y, epilogue);
    return stream_panel_rows<float>(x, n_rows, w, bias, p0, p1, y, epilogue);
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

void exp_shifted(float* x, int n, float shift) {
  switch (active_path().load(std::memory_order_relaxed)) {
#if GPT2_X86
    case VectorPath::avx512:
      return exp_shifted_avx512(x, n, shift);
    case VectorPath::avx2:
      return exp_shifted_avx2(x, n, shift);
#endif
    default:
      return exp_shifted_sse2(x, n, shift);
  }
}

void weighted_sum(const float* p, const float* rows, int n, int stride, int dim, float* out) {
  switch (active_path().load(std::memory_order_relaxed)) {
#if GPT2_X86
    case VectorPath::avx512:
      return weighted_sum_avx512(p, rows, n, stride, dim, out);
    case VectorPath::avx2:
      return weighted_sum_avx2(p, rows, n, stride, dim, out);
#endif
    default:
      return weighted_sum_sse2(p, rows, n, stride, dim, out);
  }
}

bool cpu_has(VectorPath path) {
#if GPT2_X86
  __builtin_cpu_init();
  switch (path) {
    case VectorPath::avx512:
      return __builtin_cpu_supports("avx512f");
    case VectorPath::avx2:
      return __builtin_cpu_supports("avx2");
    case VectorPath::sse2:
      return true;
  }
#endif
  return path == VectorPath::sse2;
}

VectorPath vector_path() { return active_path().load(std::memory_order_relaxed); }

void set_vector_path(VectorPath path) {
  if (!cpu_has(path)) {
    throw ModelError(std::string("this CPU cannot run the ") + vector_path_name(path) +
                     " vector path");
  }
  active_path().store(path, std::memory_order_relaxed);
}

const char* vector_path_name(VectorPath path) {
  switch (path) {
    case VectorPath::avx512:
      return "avx512";
    case VectorPath::avx2:
      return "avx2";
    case VectorPath::sse2:
      return "sse2";
  }
  return "?";
}

float Matrix::at(int k, int j) const {
  if (bf16) {
    const uint32_t top = bf16[panel_index(n_in, k, j)];
    return numerics::float_from_bits(top << 16);
  }
  return panels ? data[panel_index(n_in, k, j)] : data[static_cast<size_t>(k) * n_out + j];
}

bool to_bf16(const float* values, size_t n, uint16_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = numerics::float_bits(values[i]);
    if ((bits & 0xffffu) != 0) return false;
    out[i] = static_cast<uint16_t>(bits >> 16);
  }
  return true;
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
  // Tasks are contiguous column ranges of whole units, near-equal (their sizes differ by
  // one unit at most). Few rows (a decode step, bound by memory): one range per thread,
  // read front to back, in units of a panel. Many rows (bound by arithmetic): about 4
  // ranges per thread in units of an AVX-512 strip (2 panels); threads take the next
  // range as they become free, so one thread slowed by other work on the machine does not
  // leave the others waiting.
  const int n_panels = (w.n_out + PANEL - 1) / PANEL;
  const int threads = pool ? pool->size() : 1;
  const bool many = n_rows >= 4 && threads > 1;
  const int unit = many ? 2 * PANEL : PANEL;  // columns
  const int n_units = (n_panels * PANEL + unit - 1) / unit;
  int n_tasks = threads;
  if (many) {  // up to 4 per thread, equal where some multiple of `threads` divides n_units
    n_tasks = 4 * threads;
    for (int t = 4 * threads; t > threads; t -= threads) {
      if (n_units % t == 0) {
        n_tasks = t;
        break;
      }
    }
  }
  n_tasks = std::min(n_tasks, n_units);
  auto task = [&](int t, int) {
    const int j0 = t * n_units / n_tasks * unit;
    const int j1 = std::min(w.n_out, (t + 1) * n_units / n_tasks * unit);
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

namespace {

// layer_norm of R rows side by side: each row's sums are layer_norm's loops, in the same
// order; only the R rows' independent additions overlap (one sum is a chain of dependent
// additions, slow alone).   x, y: [R, n]
template <int R>
void layer_norm_group(const float* x, const float* weight, const float* bias, int n, float* y) {
  const float n_f = static_cast<float>(n);
  float sum[R] = {}, sq[R] = {}, mean[R], rstd[R];
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < R; ++r) sum[r] += x[r * n + i];
  }
  for (int r = 0; r < R; ++r) mean[r] = sum[r] / n_f;
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < R; ++r) {
      const float d = x[r * n + i] - mean[r];
      sq[r] += d * d;
    }
  }
  for (int r = 0; r < R; ++r) rstd[r] = 1.0f / std::sqrt(sq[r] / n_f + 1e-5f);
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < n; ++i) {
      y[r * n + i] = ((x[r * n + i] - mean[r]) * rstd[r]) * weight[i] + bias[i];
    }
  }
}

}  // namespace

void layer_norm_rows(const float* x, const float* weight, const float* bias, int n_rows, int n,
                     float* y, ThreadPool* pool) {
  constexpr int GROUP = 4;
  auto rows = [&](int r0, int r1) {
    int r = r0;
    for (; r + GROUP <= r1; r += GROUP) {
      const size_t at = static_cast<size_t>(r) * n;
      layer_norm_group<GROUP>(x + at, weight, bias, n, y + at);
    }
    for (; r < r1; ++r) {
      layer_norm(x + static_cast<size_t>(r) * n, weight, bias, n, y + static_cast<size_t>(r) * n);
    }
  };
  const int n_tasks = pool ? std::min(pool->size(), n_rows / 8) : 1;
  if (n_tasks <= 1) return rows(0, n_rows);
  const int per = (n_rows + n_tasks - 1) / n_tasks;
  pool->run(n_tasks, [&](int t, int) { rows(t * per, std::min(n_rows, (t + 1) * per)); });
}

}  // namespace gpt2::kernels
