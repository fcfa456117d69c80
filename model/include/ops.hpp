// The arithmetic a learner uses inside attention, with a fixed, documented order of
// operations (DETERMINISM.md, "Attention helpers"). Writing the same loops by hand with
// gpt2::exp gives the same bits; std::exp or another summation order does not.
//
// The model's own attention (Model::forward) is built from exactly these calls, per head h
// and query position i:
//
//   scale = attention_scale(head_dim);               // 0.125f for head_dim 64
//   for j in 0..i:  scores[j] = dot(q_h, k_h[j], head_dim) * scale;
//   softmax(scores, i + 1);
//   weighted_sum(scores, v_h, i + 1, d_model, head_dim, out_h);
//
// where q_h = q + h * head_dim, k_h[j] = k + j * d_model + h * head_dim, and
// v_h = v + h * head_dim (rows of stride d_model). The scale multiplies the finished dot
// product; it is not folded into q or k.
#pragma once

#include <cstdint>

namespace gpt2 {

// e^x for float, own algorithm (no libm): Cody-Waite reduction x = n*ln2 + r in double,
// a degree-11 polynomial for e^r, 2^n by exponent bits, one final rounding to float.
// Error below 0.5 ulp + 2^-20 ulp (so almost always correctly rounded).
// exp(-inf) == 0 exactly (masked softmax entries), exp(+inf) == +inf, NaN -> NaN,
// x < -103.98 -> 0 (or the correctly rounded subnormal), x > 88.73 -> +inf.
float exp(float x);

// tanh for float, own algorithm (no libm): odd Taylor polynomial for |x| < 2^-6, else
// 1 - 2 / (e^(2|x|) + 1) in double with the same e^y as exp; sign restored at the end.
// Error below 0.5 ulp + 2^-20 ulp. tanh(+-0) = +-0, tanh(+-inf) = +-1, NaN -> NaN.
float tanh(float x);

// 1 / sqrt(head_dim), correctly rounded to float, computed without libm: exact for powers
// of 4 (head_dim 64 -> 0.125f, 16 -> 0.25f); for other values a double estimate is rounded
// to float and then checked (and nudged by one ulp if needed) against the two neighbouring
// rounding midpoints with exact integer arithmetic. Throws gpt2::ModelError unless
// 1 <= head_dim <= 2^24.
float attention_scale(int head_dim);

// s = 0; for i in 0..n-1: s += a[i] * b[i]   (one multiply, then one add, in that order)
float dot(const float* a, const float* b, int n);

// In place over x[0..n-1]:
//   m = max x[i];  e[i] = exp(x[i] - m);  s = sum e[i] for i = 0..n-1 in order, from 0;
//   x[i] = e[i] / s   (a division, not a multiplication by 1/s)
// Entries equal to -inf (masked) become exactly 0. At least one entry must be finite.
void softmax(float* x, int n);

// out[d] = sum over j = 0..n-1 in order of p[j] * rows[j * stride + d], for d < dim,
// each sum starting from 0.
void weighted_sum(const float* p, const float* rows, int n, int stride, int dim, float* out);

// IEEE 754 half precision (binary16), for caches that store their numbers in 16 bits
// (a quantized block's scale). Integer operations only (no libm, no conversion
// instruction), so the bits are the same on every CPU and the same as x86's F16C
// (vcvtps2ph with round-to-nearest-even, vcvtph2ps), which tests/model/ops_test.cpp checks
// where the CPU has it: on every half, and on every float whose magnitude lies where the
// roundings differ (DETERMINISM.md, "Half precision"):
// half_from_float: the half nearest to x, a tie to the one whose last bit is 0; from 65520
//   up in magnitude, +-inf; below 2^-14, a subnormal half (a multiple of 2^-24) or +-0;
//   a NaN stays a NaN, made quiet, the top 9 bits of its payload kept.
// float_from_half: the float equal to h (every half is exactly a float); a NaN keeps its
//   payload and is made quiet.
uint16_t half_from_float(float x);
float float_from_half(uint16_t h);

}  // namespace gpt2
