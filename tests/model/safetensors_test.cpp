// Loading Hugging Face safetensors weights (safetensors.hpp, Model::load_safetensors):
// small files written by the tests, good ones and every kind of broken one.
#include "safetensors.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "model_test_helpers.hpp"
#include "tensors.hpp"

namespace {

using model_test::RawTensor;
using model_test::same_bits;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The small model's tensors as F32 safetensors parts, optionally with a name prefix and
// the attention mask buffers GPT-2 checkpoints carry.
std::vector<RawTensor> small_model_parts(uint64_t seed, const std::string& prefix = "",
                                         bool with_mask_buffers = false) {
  const gpt2::Config c = model_test::small_config();
  const auto tensors = model_test::synthetic_tensors(seed, c);
  std::vector<RawTensor> parts;
  for (const auto& spec : gpt2::tensor_specs(c)) {
    parts.push_back(
        {prefix + spec.name, "F32", spec.shape, model_test::f32_bytes(tensors.at(spec.name))});
    if (with_mask_buffers && spec.name.find("ln_1.weight") != std::string::npos) {
      const std::string h = spec.name.substr(0, spec.name.find("ln_1"));
      std::vector<float> mask(c.n_ctx * c.n_ctx, 1.0f);
      parts.push_back(
          {prefix + h + "attn.bias", "F32", {1, 1, c.n_ctx, c.n_ctx}, model_test::f32_bytes(mask)});
      parts.push_back({prefix + h + "attn.masked_bias", "F32", {}, model_test::f32_bytes({-1e4f})});
    }
  }
  return parts;
}

const std::map<std::string, std::string> SMALL_META = {{"n_head", "2"}};

std::string write_parts(const std::vector<RawTensor>& parts,
                        const std::map<std::string, std::string>& meta = SMALL_META,
                        const std::string& stem = "model.safetensors") {
  const std::string path = model_test::temp_path(stem);
  model_test::write_file(path, model_test::file_bytes(model_test::header_json(parts, meta), parts));
  return path;
}

const std::vector<int> PROMPT = {3, 14, 15, 92, 65, 35, 89, 79};

// Loading must fail with a ModelError whose message contains every one of `needles`.
void expect_load_error(const std::string& path, std::vector<std::string> needles) {
  try {
    gpt2::Model::load_safetensors(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const gpt2::ModelError& e) {
    const std::string msg = e.what();
    needles.push_back(path);
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST(safetensors, loaded_weights_give_the_same_bits_as_the_synthetic_model) {
  const std::string path = write_parts(small_model_parts(3));
  const gpt2::Model loaded = gpt2::Model::load_safetensors(path);
  const gpt2::Model synthetic = gpt2::Model::synthetic(3, model_test::small_config());
  const gpt2::Config& c = loaded.config();
  EXPECT_EQ(c.n_layer, 2);
  EXPECT_EQ(c.n_head, 2);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.d_model, 16);
  EXPECT_EQ(c.n_ctx, 32);
  EXPECT_EQ(c.vocab, 97);
  EXPECT_TRUE(same_bits(loaded.forward(PROMPT), synthetic.forward(PROMPT), c.vocab));
  std::filesystem::remove(path);
}

TEST(safetensors, transformer_prefix_and_mask_buffers_are_accepted) {
  const std::string path = write_parts(small_model_parts(3, "transformer.", true));
  const gpt2::Model loaded = gpt2::Model::load_safetensors(path);
  const gpt2::Model synthetic = gpt2::Model::synthetic(3, model_test::small_config());
  EXPECT_TRUE(same_bits(loaded.forward(PROMPT), synthetic.forward(PROMPT), 97));
  std::filesystem::remove(path);
}

TEST(safetensors, unpadded_header_gives_unaligned_f32_data_which_is_copied) {
  auto parts = small_model_parts(3);
  const std::string header = model_test::header_json(parts, SMALL_META) + " ";  // odd length
  ASSERT_NE(header.size() % 4, 0u);
  const std::string path = model_test::temp_path("unaligned.safetensors");
  model_test::write_file(path, model_test::file_bytes(header, parts, /*pad=*/false));
  const gpt2::Model loaded = gpt2::Model::load_safetensors(path);
  const gpt2::Model synthetic = gpt2::Model::synthetic(3, model_test::small_config());
  EXPECT_TRUE(same_bits(loaded.forward(PROMPT), synthetic.forward(PROMPT), 97));
  std::filesystem::remove(path);
}

TEST(safetensors, library_writer_round_trips) {
  const gpt2::Config c = model_test::small_config();
  const auto tensors = model_test::synthetic_tensors(4, c);
  std::vector<gpt2::safetensors::F32Tensor> out;
  for (const auto& spec : gpt2::tensor_specs(c))
    out.push_back({spec.name, spec.shape, tensors.at(spec.name).data()});
  const std::string path = model_test::temp_path("written.safetensors");
  gpt2::safetensors::write_f32(path, out, SMALL_META);
  const auto file = gpt2::safetensors::File::open(path);
  EXPECT_EQ(file.metadata().at("n_head"), "2");
  ASSERT_EQ(file.tensors().size(), out.size());
  const auto* wte = file.find("wte.weight");
  ASSERT_NE(wte, nullptr);
  EXPECT_EQ(wte->dtype, "F32");
  EXPECT_EQ(wte->shape, (std::vector<int64_t>{97, 16}));
  EXPECT_EQ(std::memcmp(wte->data, tensors.at("wte.weight").data(), 97 * 16 * 4), 0);
  const gpt2::Model loaded = gpt2::Model::load_safetensors(path);
  EXPECT_TRUE(same_bits(loaded.forward(PROMPT), gpt2::Model::synthetic(4, c).forward(PROMPT), 97));
  std::filesystem::remove(path);
}

// Values that F16 and BF16 hold exactly, so a converted file must give the F32 file's bits.
std::vector<RawTensor> rounded_parts(const std::string& dtype, std::vector<RawTensor>* as_f32) {
  auto parts = small_model_parts(6);
  std::vector<RawTensor> low;
  for (auto& p : parts) {
    std::vector<float> v(p.bytes.size() / 4);
    std::memcpy(v.data(), p.bytes.data(), p.bytes.size());
    std::string bytes;
    for (float& x : v) {
      uint16_t h;
      if (dtype == "BF16") {
        h = static_cast<uint16_t>(bits_of(x) >> 16);  // truncate to bfloat16
        x = gpt2::safetensors::bf16_to_f32(h);
      } else {
        // Keep 10 mantissa bits; values below F16's normal range become zero.
        uint32_t b = bits_of(x) & ~0x1fffu;
        if (std::fabs(x) < 0x1p-14f) b &= 0x80000000u;
        std::memcpy(&x, &b, 4);
        const int e = static_cast<int>((b >> 23) & 0xff) - 127;
        h = static_cast<uint16_t>((b >> 16) & 0x8000u);
        if ((b & 0x7fffffffu) != 0) {
          EXPECT_LE(e, 15);
          h = static_cast<uint16_t>(h | ((e + 15) << 10) | ((b >> 13) & 0x3ffu));
        }
      }
      bytes.append(reinterpret_cast<const char*>(&h), 2);
    }
    low.push_back({p.name, dtype, p.shape, bytes});
    as_f32->push_back({p.name, "F32", p.shape, model_test::f32_bytes(v)});
  }
  return low;
}

TEST(safetensors, f16_and_bf16_are_converted_on_load) {
  for (std::string dtype : {"F16", "BF16"}) {
    std::vector<RawTensor> as_f32;
    const auto low = rounded_parts(dtype, &as_f32);
    const std::string low_path = write_parts(low, SMALL_META, dtype + ".safetensors");
    const std::string f32_path = write_parts(as_f32, SMALL_META, dtype + "_f32.safetensors");
    const gpt2::Model a = gpt2::Model::load_safetensors(low_path);
    const gpt2::Model b = gpt2::Model::load_safetensors(f32_path);
    EXPECT_TRUE(same_bits(a.forward(PROMPT), b.forward(PROMPT), 97)) << dtype;
    std::filesystem::remove(low_path);
    std::filesystem::remove(f32_path);
  }
}

TEST(safetensors, f16_conversion_is_exact_for_every_value) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = gpt2::safetensors::f16_to_f32(static_cast<uint16_t>(h));
    const uint32_t sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) {
      if (m == 0) {
        ASSERT_TRUE(std::isinf(f)) << h;
      } else {
        ASSERT_TRUE(std::isnan(f)) << h;
      }
      continue;
    }
    const double mag = e == 0 ? std::ldexp(static_cast<double>(m), -24)
                              : std::ldexp(1024.0 + m, static_cast<int>(e) - 25);
    ASSERT_EQ(static_cast<double>(f), sign ? -mag : mag) << h;
    ASSERT_EQ(std::signbit(f), sign == 1) << h;
  }
  EXPECT_EQ(gpt2::safetensors::bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(gpt2::safetensors::bf16_to_f32(0xc040), -3.0f);
}

TEST(safetensors, n_head_comes_from_metadata_or_defaults) {
  // d_model 16 is not a multiple of 64: without metadata n_head cannot be inferred.
  expect_load_error(write_parts(small_model_parts(3), {}), {"n_head", "d_model 16"});
  expect_load_error(write_parts(small_model_parts(3), {{"n_head", "3"}}), {"n_head", "'3'"});
  expect_load_error(write_parts(small_model_parts(3), {{"n_head", "two"}}), {"n_head"});
  const std::string path = write_parts(small_model_parts(3), {{"n_head", "4"}});
  const gpt2::Model m = gpt2::Model::load_safetensors(path);
  EXPECT_EQ(m.config().n_head, 4);
  EXPECT_EQ(m.config().head_dim, 4);
  std::filesystem::remove(path);
}

TEST(safetensors, missing_empty_and_truncated_files_are_clear_errors) {
  expect_load_error(model_test::temp_path("does-not-exist.safetensors"), {"cannot open"});
  const std::string dir = model_test::temp_path("a-directory");
  std::filesystem::create_directories(dir);
  expect_load_error(dir, {"not a regular file"});
  std::filesystem::remove(dir);
  const std::string empty = model_test::temp_path("empty.safetensors");
  model_test::write_file(empty, "");
  expect_load_error(empty, {"truncated", "0 bytes"});
  model_test::write_file(empty, "abcde");
  expect_load_error(empty, {"truncated", "5 bytes"});

  const auto parts = small_model_parts(3);
  const std::string full =
      model_test::file_bytes(model_test::header_json(parts, SMALL_META), parts);
  const std::string path = model_test::temp_path("cut.safetensors");
  // Cut inside the header: the header length points past the end.
  model_test::write_file(path, full.substr(0, 40));
  expect_load_error(path, {"header length", "past the end"});
  // Cut inside the data: the last tensor's offsets point past the end.
  model_test::write_file(path, full.substr(0, full.size() - 10));
  expect_load_error(path, {"tensor 'h.1.mlp.c_proj.bias'", "outside the data area", "truncated"});
  std::filesystem::remove(path);
  std::filesystem::remove(empty);
}

TEST(safetensors, header_problems_are_clear_errors) {
  const auto parts = small_model_parts(3);
  const std::string path = model_test::temp_path("bad-header.safetensors");
  auto with_header = [&](const std::string& header) {
    model_test::write_file(path, model_test::file_bytes(header, parts));
  };
  with_header("{\"wte.weight\": {\"dtype\": \"F32\", ");
  expect_load_error(path, {"malformed JSON header"});
  with_header("[1, 2, 3]");
  expect_load_error(path, {"malformed JSON header", "not a JSON object"});
  with_header("{\"wte.weight\": 5}");
  expect_load_error(path, {"tensor 'wte.weight'", "not a JSON object"});
  with_header("{\"wte.weight\": {\"shape\": [97, 16], \"data_offsets\": [0, 6208]}}");
  expect_load_error(path, {"tensor 'wte.weight'", "dtype"});
  with_header(
      "{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [97, -16], \"data_offsets\": [0, 6208]}}");
  expect_load_error(path, {"tensor 'wte.weight'", "shape"});
  with_header("{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [97, 16], \"data_offsets\": [0]}}");
  expect_load_error(path, {"tensor 'wte.weight'", "data_offsets"});
  with_header(
      "{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [97, 16], \"data_offsets\": [100, 50]}}");
  expect_load_error(path, {"tensor 'wte.weight'", "outside the data area"});
  with_header("{\"__metadata__\": {\"n_head\": 2}}");
  expect_load_error(path, {"__metadata__"});
  // A header length far beyond the file.
  std::string bytes = model_test::file_bytes(model_test::header_json(parts, SMALL_META), parts);
  const uint64_t huge = 1ull << 60;
  std::memcpy(bytes.data(), &huge, 8);
  model_test::write_file(path, bytes);
  expect_load_error(path, {"header length", "past the end"});
  std::filesystem::remove(path);
}

TEST(safetensors, tensor_problems_are_clear_errors) {
  const std::string path = model_test::temp_path("bad-tensor.safetensors");
  auto write = [&](const std::vector<RawTensor>& parts) {
    model_test::write_file(
        path, model_test::file_bytes(model_test::header_json(parts, SMALL_META), parts));
  };
  auto edit = [&](const std::string& name, auto change) {
    auto parts = small_model_parts(3);
    for (auto& p : parts) {
      if (p.name == name) change(p);
    }
    write(parts);
  };
  auto drop = [&](const std::string& name) {
    auto parts = small_model_parts(3);
    std::erase_if(parts, [&](const RawTensor& p) { return p.name == name; });
    write(parts);
  };

  drop("h.1.attn.c_proj.weight");
  expect_load_error(path, {"missing tensor 'h.1.attn.c_proj.weight'"});
  drop("wte.weight");
  expect_load_error(path, {"missing tensor 'wte.weight'"});
  drop("ln_f.bias");
  expect_load_error(path, {"missing tensor 'ln_f.bias'"});

  edit("h.0.mlp.c_fc.weight", [](RawTensor& p) { p.shape = {64, 16}; });  // transposed
  expect_load_error(path,
                    {"tensor 'h.0.mlp.c_fc.weight'", "wrong shape [64, 16]", "expected [16, 64]"});
  edit("wpe.weight", [](RawTensor& p) { p.shape = {16, 32}; });
  expect_load_error(path, {"tensor 'wpe.weight'", "wrong shape"});
  edit("h.1.ln_2.bias", [](RawTensor& p) { p.dtype = "I32"; });
  expect_load_error(path, {"tensor 'h.1.ln_2.bias'", "unsupported dtype 'I32'"});
  edit("h.1.ln_2.bias", [](RawTensor& p) { p.dtype = "Q4"; });
  expect_load_error(path, {"tensor 'h.1.ln_2.bias'", "unsupported dtype 'Q4'"});
  // Offsets that do not match shape * dtype size.
  edit("h.0.attn.c_attn.bias", [](RawTensor& p) { p.bytes += std::string(4, '\0'); });
  expect_load_error(path, {"tensor 'h.0.attn.c_attn.bias'", "hold 196 bytes", "needs 192"});
  edit("h.0.attn.c_attn.bias", [](RawTensor& p) { p.dtype = "F16"; });
  expect_load_error(path, {"tensor 'h.0.attn.c_attn.bias'", "needs 96"});
  std::filesystem::remove(path);
}

TEST(safetensors, file_lists_tensors_in_header_order) {
  const std::string path = write_parts(small_model_parts(3, "", true));
  const auto file = gpt2::safetensors::File::open(path);
  EXPECT_EQ(file.tensors().front().name, "wte.weight");
  ASSERT_NE(file.find("h.0.attn.bias"), nullptr);
  EXPECT_EQ(file.find("h.0.attn.bias")->shape, (std::vector<int64_t>{1, 1, 32, 32}));
  EXPECT_EQ(file.find("nope"), nullptr);
  EXPECT_EQ(gpt2::safetensors::dtype_size("BF16"), 2u);
  EXPECT_EQ(gpt2::safetensors::dtype_size("what"), 0u);
  std::filesystem::remove(path);
}

// A file of `header` and `data_bytes` zero bytes, as raw bytes (no layout done for it).
std::string raw_file(const std::string& header, size_t data_bytes) {
  const uint64_t n = header.size();
  std::string bytes(reinterpret_cast<const char*>(&n), 8);
  return bytes + header + std::string(data_bytes, '\0');
}

// The ModelError of reading these bytes, or "" when they read.
std::string layout_error(const std::string& header, size_t data_bytes) {
  try {
    gpt2::safetensors::File::from_bytes(raw_file(header, data_bytes), "mem.safetensors");
  } catch (const gpt2::ModelError& e) {
    return e.what();
  }
  return "";
}

std::string entry(const std::string& name, uint64_t begin, uint64_t end) {
  return "\"" + name + "\": {\"dtype\": \"U8\", \"shape\": [" + std::to_string(end - begin) +
         "], \"data_offsets\": [" + std::to_string(begin) + ", " + std::to_string(end) + "]}";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(safetensors, data_offsets_must_tile_the_data_area) {
  EXPECT_EQ(layout_error("{" + entry("a", 0, 8) + ", " + entry("b", 8, 16) + "}", 16), "");
  EXPECT_EQ(layout_error("{" + entry("b", 8, 16) + ", " + entry("a", 0, 8) + "}", 16), "") << "any order";
  EXPECT_EQ(layout_error("{" + entry("a", 0, 8) + ", " + entry("empty", 8, 8) + ", " + entry("b", 8, 16) + "}", 16), "");
  // Overlapping: both tensors own the same bytes.
  std::string e = layout_error("{" + entry("a", 0, 8) + ", " + entry("b", 4, 12) + "}", 12);
  EXPECT_TRUE(has(e, "safetensors file 'mem.safetensors': tensor 'b': data_offsets [4, 12] overlap those of tensor 'a' [0, 8]")) << e;
  e = layout_error("{" + entry("a", 0, 8) + ", " + entry("tied", 0, 8) + "}", 8);
  EXPECT_TRUE(has(e, "tensor 'tied': data_offsets [0, 8] overlap")) << e;
  // A gap, at the start or between tensors, and bytes after the last tensor.
  e = layout_error("{" + entry("a", 0, 8) + ", " + entry("b", 12, 16) + "}", 16);
  EXPECT_TRUE(has(e, "tensor 'b': data_offsets [12, 16] leave the 4 bytes from offset 8 of the data area to no tensor (after tensor 'a')")) << e;
  e = layout_error("{" + entry("a", 4, 8) + "}", 8);
  EXPECT_TRUE(has(e, "tensor 'a': data_offsets [4, 8] leave the 4 bytes from offset 0")) << e;
  e = layout_error("{" + entry("a", 0, 8) + "}", 12);
  EXPECT_TRUE(has(e, "the data area has 4 bytes after the end of the last tensor, 'a', that belong to no tensor")) << e;
  EXPECT_TRUE(has(layout_error("{}", 4), "4 bytes after the header, which lists no tensor")) << layout_error("{}", 4);
}

TEST(safetensors, a_key_that_appears_twice_is_refused_naming_it) {
  std::string e = layout_error("{" + entry("wte.weight", 0, 8) + ", " + entry("wte.weight", 8, 16) + "}", 16);
  EXPECT_TRUE(has(e, "tensor 'wte.weight' appears twice in the header")) << e;
  e = layout_error(R"({"a": {"dtype": "U8", "dtype": "F32", "shape": [8], "data_offsets": [0, 8]}})", 8);
  EXPECT_TRUE(has(e, "tensor 'a': the key 'dtype' appears twice")) << e;
  e = layout_error(R"({"__metadata__": {"n_head": "2", "n_head": "3"}})", 0);
  EXPECT_TRUE(has(e, "__metadata__: the key 'n_head' appears twice")) << e;
  // The same key in two different objects is fine.
  EXPECT_EQ(layout_error(R"({"__metadata__": {"dtype": "x"}, )" + entry("a", 0, 8) + "}", 8), "");
}

TEST(safetensors, a_deep_or_huge_number_header_is_a_clear_error) {
  std::string e = layout_error(R"({"__metadata__": {"x": )" + std::string(100000, '[') + std::string(100000, ']') + "}}", 0);
  EXPECT_TRUE(has(e, "malformed JSON header: nested too deeply")) << e;
  e = layout_error(R"({"a": {"dtype": "U8", "shape": [1e400], "data_offsets": [0, 8]}})", 8);
  EXPECT_TRUE(has(e, "malformed JSON header")) << e;
}

TEST(safetensors, a_fifo_is_refused_at_once) {
  const std::string fifo = model_test::temp_path("weights.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_load_error(fifo, {"not a regular file (a FIFO)"});
  std::filesystem::remove(fifo);
}

}  // namespace
