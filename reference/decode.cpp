// Reference solution for src/decode.cpp (stages one-token, prefill, prefix-reuse and generate).
#include "course/decode.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops.hpp"

namespace course {

namespace {

void check_token(const gpt2::Model& model, int token) {
  if (token < 0 || token >= model.config().vocab)
    throw std::invalid_argument("token id " + std::to_string(token) + " is outside 0 .. " +
                                std::to_string(model.config().vocab - 1));
}

// Copies a layer's head h of positions 0 .. n-1 into [n, head_dim] rows.
void gather_head(const KVView& cache, int h, int n, bool keys, std::vector<float>& rows) {
  rows.resize(size_t(n) * head_dim);
  for (int j = 0; j < n; ++j) {
    std::span<const float> src = keys ? cache.key(h, j) : cache.value(h, j);
    for (int d = 0; d < head_dim; ++d) rows[size_t(j) * head_dim + d] = src[size_t(d)];
  }
}

// One query row (position p = n_visible - 1) against positions 0 .. n_visible-1 of the
// cache, and positions n_visible .. n_total-1 masked out with -inf.
void attend_row(const float* q, const KVView& cache, int n_visible, int n_total, float* out) {
  const float scale = gpt2::attention_scale(head_dim);
  std::vector<float> scores(static_cast<size_t>(n_total));  // [n_total]
  std::vector<float> values;                    // [n_total, head_dim]
  for (int h = 0; h < n_heads; ++h) {
    const float* q_h = q + h * head_dim;
    for (int j = 0; j < n_total; ++j)
      scores[size_t(j)] = j < n_visible ? gpt2::dot(q_h, cache.key(h, j).data(), head_dim) * scale : -INFINITY;
    // exp(-inf) is exactly 0: the masked entries add nothing to the softmax's sum and
    // nothing to the weighted sum, so the result equals attending to n_visible positions.
    gpt2::softmax(scores.data(), n_total);
    gather_head(cache, h, n_total, false, values);
    gpt2::weighted_sum(scores.data(), values.data(), n_total, head_dim, head_dim, out + h * head_dim);
  }
}

}  // namespace

void attend_one(std::span<const float> q, const KVView& cache, std::span<float> out) {
  const int n = cache.length();
  if (n < 1) throw std::invalid_argument("attend_one: the cache is empty");
  if (q.size() != size_t(d_model) || out.size() != size_t(d_model))
    throw std::invalid_argument("attend_one: q and out hold 768 floats");
  attend_row(q.data(), cache, n, n, out.data());
}

std::vector<float> decode_step(const gpt2::Model& model, ModelCache& cache, int token) {
  check_token(model, token);
  const int pos = cache.layer(0).length();  // the new token's position
  std::vector<float> x(d_model);            // [1, d_model] residual stream
  std::vector<float> q(d_model), k(d_model), v(d_model);  // [1, d_model] each
  std::vector<float> attn(d_model);         // [1, d_model]
  model.embed(&token, &pos, 1, x.data());
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), 1, q.data(), k.data(), v.data());
    cache.layer(l).append(k, v);  // first, so the token attends to itself
    attend_one(q, cache.layer(l), attn);
    model.finish_block(l, attn.data(), 1, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab]
  model.logits(x.data(), 1, logits.data());
  return logits;
}

void attend_causal(std::span<const float> q, int n_rows, const KVView& cache, std::span<float> out) {
  const int n_total = cache.length();
  if (n_rows < 1 || n_rows > n_total)
    throw std::invalid_argument("attend_causal: " + std::to_string(n_rows) + " query rows for a cache of " +
                                std::to_string(n_total) + " positions");
  if (q.size() != size_t(n_rows) * d_model || out.size() != size_t(n_rows) * d_model)
    throw std::invalid_argument("attend_causal: q and out hold n_rows * 768 floats");
  const int first = n_total - n_rows;  // position of query row 0
  for (int r = 0; r < n_rows; ++r) {
    const int pos = first + r;
    // Row r sees positions 0 .. pos: n_visible = pos + 1, the rest of the cache is masked.
    attend_row(q.data() + size_t(r) * d_model, cache, pos + 1, n_total, out.data() + size_t(r) * d_model);
  }
}

std::vector<float> prefill(const gpt2::Model& model, ModelCache& cache, std::span<const int> tokens) {
  if (tokens.empty()) throw std::invalid_argument("prefill: no tokens");
  const int n = int(tokens.size());
  const int past = cache.layer(0).length();  // positions already cached
  std::vector<int> positions(static_cast<size_t>(n));   // [n]
  for (int i = 0; i < n; ++i) {
    check_token(model, tokens[size_t(i)]);
    positions[size_t(i)] = past + i;
  }
  const size_t rows = size_t(n) * d_model;
  std::vector<float> x(rows);                       // [n, d_model] residual stream
  std::vector<float> q(rows), k(rows), v(rows);     // [n, d_model] each
  std::vector<float> attn(rows);                    // [n, d_model]
  model.embed(tokens.data(), positions.data(), n, x.data());
  for (int l = 0; l < n_layers; ++l) {
    model.qkv(l, x.data(), n, q.data(), k.data(), v.data());
    for (int i = 0; i < n; ++i)
      cache.layer(l).append(std::span<const float>(k).subspan(size_t(i) * d_model, d_model),
                            std::span<const float>(v).subspan(size_t(i) * d_model, d_model));
    attend_causal(q, n, cache.layer(l), attn);
    model.finish_block(l, attn.data(), n, x.data());
  }
  std::vector<float> logits(size_t(model.config().vocab));  // [vocab] of the last row
  model.logits(x.data() + size_t(n - 1) * d_model, 1, logits.data());
  return logits;
}

SavedPrefix save_prefix(const gpt2::Model& model, std::span<const int> prefix) {
  SavedPrefix saved;
  saved.logits = prefill(model, saved.cache, prefix);
  return saved;
}

SavedPrefix continue_from(const gpt2::Model& model, const SavedPrefix& saved, std::span<const int> suffix) {
  SavedPrefix longer;
  longer.cache = saved.cache.clone();  // a deep copy: the saved prefix stays as it is
  longer.logits = prefill(model, longer.cache, suffix);
  return longer;
}

Generated generate_greedy(const gpt2::Model& model, ModelCache& cache, std::span<const int> prompt,
                          int max_new_tokens, const TokenSink& on_token) {
  if (max_new_tokens < 1)
    throw std::invalid_argument("generate_greedy: max_new_tokens is " + std::to_string(max_new_tokens) +
                                "; at least 1 token must be generated");
  Generated out;
  std::vector<float> logits = prefill(model, cache, prompt);  // [vocab] of the prompt's last position
  for (int i = 0;; ++i) {
    const int token = greedy(logits);
    out.tokens.push_back(token);
    out.logits.insert(out.logits.end(), logits.begin(), logits.end());
    if (on_token) on_token(token);
    if (i + 1 == max_new_tokens) break;  // the last token is never fed back
    logits = decode_step(model, cache, token);
  }
  return out;
}

}  // namespace course
