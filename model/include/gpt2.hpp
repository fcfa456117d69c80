// GPT-2 small for the course: weights, the pieces a decode or prefill loop is built from,
// and a no-cache forward pass that is the ground truth for every graded number.
//
// Every function here is deterministic to the bit: a row's result does not depend on how
// many other rows are in the batch, on the thread count, on the compiler or on the CPU.
// DETERMINISM.md in this folder says how, and which loop each helper performs.
//
// Activations are row-major float32: a batch of n_rows rows of width W is a buffer
// [n_rows, W], row r at x + r * W.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpt2 {

namespace detail {
struct Access;  // the toolkit's own tools (kvc bench, forward's attention); see detail.hpp
}

struct Config {
  int n_layer = 12;
  int n_head = 12;
  int head_dim = 64;
  int d_model = 768;  // n_head * head_dim
  int n_ctx = 1024;
  int vocab = 50257;
};

// The real model's shape.
Config gpt2_small();

// Thrown for a bad weights file, a bad token, a bad argument: the message names the
// file or tensor and the problem.
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rows that went through a Model's pieces since it was built or since reset_work(): what
// the course's grader reads to check that a cache is really used (a decode step puts one
// row per layer through the model, a continuation only its suffix). Counting is a relaxed
// atomic add per call; it never changes a number.
struct WorkCounts {
  uint64_t embed = 0;                  // rows embedded
  std::vector<uint64_t> qkv;           // [n_layer]: rows through qkv(layer, ...)
  std::vector<uint64_t> finish_block;  // [n_layer]: rows through finish_block(layer, ...)
  uint64_t logits = 0;                 // rows through logits()
  uint64_t forward = 0;                // tokens through forward() (whose rows count above too)
};

// The checks forward() makes before any work: throws ModelError if there are more tokens
// than config.n_ctx or a token id is negative or >= config.vocab (naming the first bad one).
void check_tokens(std::span<const int> tokens, const Config& config);

class Model {
 public:
  // Seeded synthetic weights with GPT-2-like scale (see DETERMINISM.md: "Synthetic
  // weights" and synthetic.hpp). The same seed and config give the same bits on every
  // machine. The matrices' values are bfloat16 and kept as such (248 MB of GPT-2 small's
  // 250 MB; the rest floats). Generated on all cores: about 0.5 CPU-s on this project's
  // machine (`kvc bench`'s synthetic_s on one thread).
  static Model synthetic(uint64_t seed, const Config& config = gpt2_small());
  // A Hugging Face GPT-2 model.safetensors, memory-mapped: F32 tensors are used in place;
  // F16/BF16 ones are converted to F32 on load, and wte is copied (transposed, for the
  // logits). Tensor names may carry a "transformer." prefix; h.{i}.attn.bias and
  // .masked_bias buffers and any other extra tensors are ignored. The config comes from the shapes
  // (vocab and d_model from wte, n_ctx from wpe, n_layer from the h.{i} blocks); n_head
  // from __metadata__ "n_head" if present, else 12 for d_model 768, else d_model / 64.
  // Throws ModelError naming the file, the tensor and the problem.
  static Model load_safetensors(const std::string& path);

  // A model with this one's weights, except that token `to`'s row of the token embedding
  // (wte[to], which both embeds the token and gives its logit) is a copy of token `from`'s.
  // After any context the two tokens then have the same logit, bit for bit: an exact tie,
  // for checking a sampler's rule on ties. The new model owns its wte (vocab * d_model
  // values, stored as this model stores them: bfloat16 for synthetic weights) and reads
  // every other weight from this model, which must outlive it; its
  // work counters and threads are its own. Throws ModelError for a token id out of range.
  Model with_token_row_copied(int from, int to) const;

  const Config& config() const;

  // Every method below throws ModelError for a bad layer index, token id or position
  // (checked before any work), and otherwise works on rows independently: row r's result
  // has the same bits whatever the other rows are and however many there are.

  // x[r] = wte[tokens[r]] + wpe[positions[r]].           x: [n_rows, d_model]
  void embed(const int* tokens, const int* positions, int n_rows, float* x) const;

  // ln_1, then c_attn, split into q, k, v.  x: [n_rows, d_model] (not changed)
  // q, k, v: [n_rows, d_model] each; head h is columns h*head_dim .. h*head_dim+head_dim-1.
  void qkv(int layer, const float* x, int n_rows, float* q, float* k, float* v) const;

  // The rest of block `layer` after attention, in place on the residual stream:
  //   x += c_proj(attn);  x += mlp(ln_2(x))
  // attn: [n_rows, d_model], the heads' outputs concatenated (head h in its 64 columns).
  void finish_block(int layer, const float* attn, int n_rows, float* x) const;

  // ln_f, then logits against the tied token embedding.  logits: [n_rows, vocab]
  void logits(const float* x, int n_rows, float* logits) const;

  // No cache, causal attention over all of `tokens`: logits of every position,
  // [tokens.size(), vocab]. The ground truth for decode and prefill.
  std::vector<float> forward(std::span<const int> tokens) const;

  // Threads used by the matrix products and forward()'s attention (1 = only the calling
  // thread). Results do not depend on it. Default: all cores
  // (std::thread::hardware_concurrency). Values below 1 mean 1.
  void set_threads(int n_threads);
  int threads() const;

  // The rows counted so far (WorkCounts), and a reset to zero. Safe to call from any thread;
  // a call running concurrently with a reset may count on either side of it.
  WorkCounts work() const;
  void reset_work() const;

  // Bytes of weights one decode step reads: every block's parameters, ln_f, all of wte
  // (for the logits) and one row of wpe.
  uint64_t decode_weight_bytes() const;

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

 private:
  friend struct detail::Access;
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpt2
