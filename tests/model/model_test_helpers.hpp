// Shared helpers for the model tests: configs, bit-exact comparison, a plain double
// GPT-2 (the naive reference), and writing safetensors files byte by byte.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generate.hpp"
#include "gpt2.hpp"

namespace model_test {

// 2 layers, 2 heads of 8, vocab 97, n_ctx 32: the tests' small model.
gpt2::Config small_config();

// 2 layers, 4 heads of 64 (d_model 256), vocab 300, n_ctx 80: small, but with GPT-2's head
// width and d_model a whole number of the kernels' panels, as the variants need
// (grouped_query.hpp, rotary.hpp, latent.hpp).
gpt2::Config variant_config();

// n token ids below vocab, spread over it.
std::vector<int> spread_tokens(int n, int vocab);

// Logits by a cached decoder: a prefill of the first `prefill` tokens (its last row), then
// one step per remaining token: rows for positions prefill-1 .. tokens.size()-1.
std::vector<float> decoded_rows(gpt2::Decoder& decoder, const std::vector<int>& tokens,
                                int prefill);
// Rows first .. of a [n, width] buffer.
std::vector<float> rows_from(const std::vector<float>& all, int first, int width);

// GPT-2 small with synthetic weights, seed 1, made once per test process (a test that
// changes its thread count puts it back).
gpt2::Model& gpt2_small_model();

// The bits of a float.
uint32_t bits(float f);

// Passes iff a and b have the same length and the same bits everywhere; otherwise names the
// first differing index (as [row, column] with `row_width` columns a row), the number of
// differing values and the largest |difference|.
testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b,
                                   int row_width);

// Passes iff |got - want| <= rel * max|want over the row| for every element of every row.
testing::AssertionResult close_rows(const std::vector<float>& got, const std::vector<double>& want,
                                    int row_width, double rel);

// Every tensor of a model by HF name, row-major, as float.
using Tensors = std::map<std::string, std::vector<float>>;
Tensors synthetic_tensors(uint64_t seed, const gpt2::Config& config);

// GPT-2 in double with std::exp/std::tanh/std::sqrt and the obvious triple loops:
// logits of every position, [tokens.size(), vocab].
std::vector<double> naive_forward(const gpt2::Config& config, const Tensors& w,
                                  const std::vector<int>& tokens);

// A safetensors file, built from parts so that tests can break any of them.
struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;  // the tensor's data
};
// The header JSON for these tensors, data laid out back to back in order (no padding).
std::string header_json(const std::vector<RawTensor>& tensors,
                        const std::map<std::string, std::string>& metadata);
// 8-byte length + header (padded with spaces to a multiple of 8 if pad) + data.
std::string file_bytes(const std::string& header, const std::vector<RawTensor>& tensors,
                       bool pad = true);
std::string f32_bytes(const std::vector<float>& values);

// The synthetic weights of (seed, config) written as a safetensors file of F32 tensors and
// loaded: a model whose matrices are floats used in place, row-major, as real GPT-2's are.
gpt2::Model f32_safetensors_model(uint64_t seed, const gpt2::Config& config);

// A fresh path in the test temp dir, unique for this process and test.
std::string temp_path(const std::string& stem);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace model_test
