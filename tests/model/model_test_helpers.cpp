#include "model_test_helpers.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>

#include "synthetic.hpp"
#include "tensors.hpp"
#include "threads.hpp"

namespace model_test {

gpt2::Config small_config() {
  gpt2::Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.head_dim = 8;
  c.d_model = 16;
  c.n_ctx = 32;
  c.vocab = 97;
  return c;
}

gpt2::Config variant_config() {
  gpt2::Config c;
  c.n_layer = 2;
  c.n_head = 4;
  c.head_dim = 64;
  c.d_model = 256;
  c.n_ctx = 80;
  c.vocab = 300;
  return c;
}

std::vector<int> spread_tokens(int n, int vocab) {
  std::vector<int> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    t[static_cast<size_t>(i)] = static_cast<int>((i * 7919LL + 13) % vocab);
  return t;
}

std::vector<float> decoded_rows(gpt2::Decoder& decoder, const std::vector<int>& tokens,
                                int prefill) {
  std::vector<float> out =
      decoder.prefill(std::span<const int>(tokens.data(), static_cast<size_t>(prefill)));
  for (size_t i = static_cast<size_t>(prefill); i < tokens.size(); ++i) {
    const std::vector<float> row = decoder.step(tokens[i]);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<float> rows_from(const std::vector<float>& all, int first, int width) {
  return std::vector<float>(all.begin() + static_cast<ptrdiff_t>(first) * width, all.end());
}

gpt2::Model& gpt2_small_model() {
  static gpt2::Model model = gpt2::Model::synthetic(1);
  return model;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b,
                                   int row_width) {
  if (a.size() != b.size()) {
    return testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  size_t first = a.size(), count = 0;
  double max_diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (bits(a[i]) != bits(b[i])) {
      if (first == a.size()) first = i;
      ++count;
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    }
  }
  if (count == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << count << " of " << a.size() << " values differ; first at [" << first / row_width << ", "
         << first % row_width << "]: " << a[first] << " vs " << b[first] << " (bits " << std::hex
         << bits(a[first]) << " vs " << bits(b[first]) << std::dec << "); max |diff| " << max_diff;
}

testing::AssertionResult close_rows(const std::vector<float>& got, const std::vector<double>& want,
                                    int row_width, double rel) {
  if (got.size() != want.size()) {
    return testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  }
  const size_t rows = got.size() / row_width;
  for (size_t r = 0; r < rows; ++r) {
    double scale = 0;
    for (int j = 0; j < row_width; ++j) scale = std::max(scale, std::fabs(want[r * row_width + j]));
    for (int j = 0; j < row_width; ++j) {
      const double diff = std::fabs(got[r * row_width + j] - want[r * row_width + j]);
      if (!(diff <= rel * scale)) {
        return testing::AssertionFailure()
               << "at [" << r << ", " << j << "]: got " << got[r * row_width + j] << ", want "
               << want[r * row_width + j] << ", |diff| " << diff << " > " << rel << " * " << scale;
      }
    }
  }
  return testing::AssertionSuccess();
}

Tensors synthetic_tensors(uint64_t seed, const gpt2::Config& config) {
  Tensors t;
  const auto specs = gpt2::tensor_specs(config);
  for (const auto& spec : specs) t[spec.name].resize(static_cast<size_t>(spec.numel()));
  // In chunks on all cores: GPT-2 small has 124M values.
  struct Chunk {
    const gpt2::TensorSpec* spec;
    uint64_t begin, end;
  };
  std::vector<Chunk> chunks;
  for (const auto& spec : specs) {
    const uint64_t n = static_cast<uint64_t>(spec.numel());
    for (uint64_t b = 0; b < n; b += 1 << 20)
      chunks.push_back({&spec, b, std::min<uint64_t>(n, b + (1 << 20))});
  }
  gpt2::ThreadPool pool(gpt2::default_thread_count());
  pool.run(static_cast<int>(chunks.size()), [&](int i, int) {
    const Chunk& c = chunks[i];
    gpt2::synthetic_fill(seed, c.spec->id, c.spec->kind, c.begin, c.end,
                         t.at(c.spec->name).data() + c.begin);
  });
  return t;
}

namespace {

using Vec = std::vector<double>;

void naive_layer_norm(const double* x, const std::vector<float>& w, const std::vector<float>& b,
                      int n, double* y) {
  double mean = 0;
  for (int i = 0; i < n; ++i) mean += x[i];
  mean /= n;
  double var = 0;
  for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= n;
  const double rstd = 1.0 / std::sqrt(var + 1e-5);
  for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i] + b[i];
}

// y[t][j] = b[j] + sum_k x[t][k] * w[k][j]   (k outer so that w is read row by row)
Vec naive_conv1d(const Vec& x, int rows, int n_in, const std::vector<float>& w,
                 const std::vector<float>& b, int n_out) {
  Vec y(static_cast<size_t>(rows) * n_out);
  for (int t = 0; t < rows; ++t) {
    double* yt = &y[static_cast<size_t>(t) * n_out];
    for (int j = 0; j < n_out; ++j) yt[j] = b[j];
    for (int k = 0; k < n_in; ++k) {
      const double xk = x[static_cast<size_t>(t) * n_in + k];
      const float* wk = &w[static_cast<size_t>(k) * n_out];
      for (int j = 0; j < n_out; ++j) yt[j] += xk * wk[j];
    }
  }
  return y;
}

}  // namespace

std::vector<double> naive_forward(const gpt2::Config& c, const Tensors& w,
                                  const std::vector<int>& tokens) {
  const int T = static_cast<int>(tokens.size()), D = c.d_model, H = c.n_head, hd = c.head_dim;
  const auto& wte = w.at("wte.weight");
  const auto& wpe = w.at("wpe.weight");
  Vec x(static_cast<size_t>(T) * D);
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < D; ++i) {
      x[t * D + i] =
          static_cast<double>(wte[static_cast<size_t>(tokens[t]) * D + i]) + wpe[t * D + i];
    }
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    Vec h(x.size());
    for (int t = 0; t < T; ++t) {
      naive_layer_norm(&x[t * D], w.at(p + "ln_1.weight"), w.at(p + "ln_1.bias"), D, &h[t * D]);
    }
    const Vec qkv =
        naive_conv1d(h, T, D, w.at(p + "attn.c_attn.weight"), w.at(p + "attn.c_attn.bias"), 3 * D);
    Vec attn(x.size(), 0.0);
    for (int head = 0; head < H; ++head) {
      for (int i = 0; i < T; ++i) {
        Vec s(i + 1);
        double m = -1e300;
        for (int j = 0; j <= i; ++j) {
          double dot = 0;
          for (int d = 0; d < hd; ++d) {
            dot += qkv[i * 3 * D + head * hd + d] * qkv[j * 3 * D + D + head * hd + d];
          }
          s[j] = dot / std::sqrt(static_cast<double>(hd));
          m = std::max(m, s[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (s[j] = std::exp(s[j] - m));
        for (int d = 0; d < hd; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += s[j] / sum * qkv[j * 3 * D + 2 * D + head * hd + d];
          attn[i * D + head * hd + d] = o;
        }
      }
    }
    const Vec proj =
        naive_conv1d(attn, T, D, w.at(p + "attn.c_proj.weight"), w.at(p + "attn.c_proj.bias"), D);
    for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
    for (int t = 0; t < T; ++t) {
      naive_layer_norm(&x[t * D], w.at(p + "ln_2.weight"), w.at(p + "ln_2.bias"), D, &h[t * D]);
    }
    Vec f = naive_conv1d(h, T, D, w.at(p + "mlp.c_fc.weight"), w.at(p + "mlp.c_fc.bias"), 4 * D);
    const double k = std::sqrt(2.0 / std::numbers::pi);
    for (double& v : f) v = 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    const Vec mlp =
        naive_conv1d(f, T, 4 * D, w.at(p + "mlp.c_proj.weight"), w.at(p + "mlp.c_proj.bias"), D);
    for (size_t i = 0; i < x.size(); ++i) x[i] += mlp[i];
  }
  Vec h(x.size());
  for (int t = 0; t < T; ++t)
    naive_layer_norm(&x[t * D], w.at("ln_f.weight"), w.at("ln_f.bias"), D, &h[t * D]);
  Vec logits(static_cast<size_t>(T) * c.vocab);
  for (int t = 0; t < T; ++t) {
    for (int v = 0; v < c.vocab; ++v) {
      double s = 0;
      for (int i = 0; i < D; ++i) s += h[t * D + i] * wte[static_cast<size_t>(v) * D + i];
      logits[static_cast<size_t>(t) * c.vocab + v] = s;
    }
  }
  return logits;
}

std::string header_json(const std::vector<RawTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    h[t.name] = {{"dtype", t.dtype},
                 {"shape", t.shape},
                 {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  return h.dump();
}

std::string file_bytes(const std::string& header, const std::vector<RawTensor>& tensors, bool pad) {
  std::string text = header;
  while (pad && text.size() % 8 != 0) text += ' ';
  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  for (const auto& t : tensors) out += t.bytes;
  return out;
}

std::string f32_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

std::string temp_path(const std::string& stem) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::ostringstream name;
  name << "kvc_model_test_" << getpid() << "_" << (info ? info->name() : "none") << "_" << stem;
  return (std::filesystem::temp_directory_path() / name.str()).string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace model_test

namespace model_test {

gpt2::Model f32_safetensors_model(uint64_t seed, const gpt2::Config& config) {
  const Tensors tensors = synthetic_tensors(seed, config);
  std::vector<RawTensor> parts;
  for (const auto& spec : gpt2::tensor_specs(config))
    parts.push_back({spec.name, "F32", spec.shape, f32_bytes(tensors.at(spec.name))});
  const std::string path = temp_path("f32.safetensors");
  write_file(path,
             file_bytes(header_json(parts, {{"n_head", std::to_string(config.n_head)}}), parts));
  gpt2::Model m = gpt2::Model::load_safetensors(path);
  std::filesystem::remove(path);  // the mapping stays
  return m;
}

}  // namespace model_test
