// The synthetic weights kept in a file (synthetic_file.hpp): mapped, they give the bits of
// Model::synthetic; a file for another seed, a cut one or one whose sampled elements are
// not the generator's is refused, naming the file and the problem.
#include "synthetic_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "model_test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("kvc-synthetic-file-" + std::to_string(::getpid()) + "-" + name);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpt2::ModelError& e) {
    return e.what();
  }
  return "";
}

void flip_byte(const fs::path& file, std::streamoff at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x10);
  f.seekp(at);
  f.write(&c, 1);
}

class synthetic_file : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const fs::path& p : made_) fs::remove(p);
  }
  fs::path make(const std::string& name) {
    const fs::path p = temp_path(name);
    made_.push_back(p);
    gpt2::write_synthetic_file(p.string(), 7, model_test::small_config());
    return p;
  }
  std::vector<fs::path> made_;
};

}  // namespace

TEST_F(synthetic_file, mapped_gives_the_bits_of_model_synthetic) {
  const fs::path p = make("same");
  const gpt2::Config c = model_test::small_config();
  const gpt2::Model generated = gpt2::Model::synthetic(7, c);
  const gpt2::Model mapped = gpt2::map_synthetic_file(p.string(), 7, c);
  const std::vector<int> tokens = {1, 5, 2, 9, 3};
  const std::vector<float> a = generated.forward(tokens), b = mapped.forward(tokens);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_NO_THROW(gpt2::verify_synthetic_file(p.string(), 7, c));
}

// The tie a case of stage generate needs, made in the mapping (only the row's pages
// copied): the same bits as Model::with_token_row_copied, and the file is not changed.
TEST_F(synthetic_file, a_token_row_copied_in_the_mapping_gives_the_bits_of_the_model_method) {
  const fs::path p = make("tie");
  const gpt2::Config c = model_test::small_config();
  const gpt2::Model generated = gpt2::Model::synthetic(7, c);
  const int from = 3, to = c.vocab - 2;
  const gpt2::Model tied = generated.with_token_row_copied(from, to);
  const gpt2::Model mapped =
      gpt2::map_synthetic_file_with_token_row_copied(p.string(), 7, from, to, c);
  const std::vector<int> tokens = {1, 5, 2, 9, 3};
  const std::vector<float> a = tied.forward(tokens), b = mapped.forward(tokens);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  const size_t vocab = size_t(c.vocab);
  EXPECT_EQ(std::memcmp(&b[b.size() - vocab + from], &b[b.size() - vocab + to], sizeof(float)), 0);
  EXPECT_NO_THROW(gpt2::verify_synthetic_file(p.string(), 7, c));
  EXPECT_THROW(gpt2::map_synthetic_file_with_token_row_copied(p.string(), 7, from, c.vocab, c),
               gpt2::ModelError);
}

TEST_F(synthetic_file, another_seed_is_refused) {
  const fs::path p = make("seed");
  const std::string e =
      error_of([&] { gpt2::map_synthetic_file(p.string(), 8, model_test::small_config()); });
  EXPECT_NE(e.find(p.string()), std::string::npos) << e;
  EXPECT_NE(e.find("made for seed 7, not 8"), std::string::npos) << e;
}

TEST_F(synthetic_file, a_cut_file_is_refused) {
  const fs::path p = make("cut");
  fs::resize_file(p, fs::file_size(p) - 4);
  const std::string e =
      error_of([&] { gpt2::map_synthetic_file(p.string(), 7, model_test::small_config()); });
  EXPECT_NE(e.find("has the wrong size: cut off?"), std::string::npos) << e;
}

TEST_F(synthetic_file, a_changed_sampled_element_is_refused_and_any_changed_byte_fails_the_digest) {
  const fs::path p = make("corrupt");
  const gpt2::Config c = model_test::small_config();
  flip_byte(p, 4096);  // the first float: layer 0's ln_1 gain, element 0, which is sampled
  std::string e = error_of([&] { gpt2::map_synthetic_file(p.string(), 7, c); });
  EXPECT_NE(e.find("is not the generator's: the file is corrupt"), std::string::npos) << e;
  const fs::path q = make("digest");
  // wpe is last, [n_ctx, d_model] as it is: its element 1 is not one of map's samples.
  const std::streamoff wpe =
      std::streamoff(fs::file_size(q)) - std::streamoff(c.n_ctx * c.d_model * 4);
  flip_byte(q, wpe + 4 + 1);
  EXPECT_NO_THROW(gpt2::map_synthetic_file(q.string(), 7, c));
  e = error_of([&] { gpt2::verify_synthetic_file(q.string(), 7, c); });
  EXPECT_NE(e.find("do not match its digest"), std::string::npos) << e;
}
