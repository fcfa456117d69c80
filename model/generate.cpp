// The model's cached decode loop, the sampler and the generation loop (generate.hpp).
#include "generate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "detail.hpp"
#include "ops.hpp"

namespace gpt2 {

// ---- The cached decode loop ------------------------------------------------------------

DecodeCache make_decode_cache(const Model& model, int capacity) {
  const Config& c = model.config();
  if (capacity < 1 || capacity > c.n_ctx) {
    throw ModelError("decode cache: capacity " + std::to_string(capacity) + " is outside 1 .. " +
                     std::to_string(c.n_ctx));
  }
  DecodeCache cache;
  cache.capacity = capacity;
  cache.k.assign(c.n_layer, std::vector<float>(static_cast<size_t>(capacity) * c.d_model));
  cache.v = cache.k;
  return cache;
}

void extend(const Model& model, DecodeCache& cache, std::span<const int> tokens, float* logits) {
  const Config& c = model.config();
  const int n = static_cast<int>(tokens.size());
  const int first = cache.length;  // position of tokens[0]
  if (n < 1) throw ModelError("extend: no tokens");
  if (first < 0 || static_cast<int>(cache.k.size()) != c.n_layer || cache.k.size() != cache.v.size()) {
    throw ModelError("extend: the cache was not made for this model");
  }
  if (first + n > cache.capacity) {
    throw ModelError("extend: " + std::to_string(first) + " cached + " + std::to_string(n) +
                     " new positions exceed the cache's " + std::to_string(cache.capacity));
  }
  check_tokens(tokens, c);
  const size_t d = static_cast<size_t>(c.d_model);
  std::vector<int> positions(n);  // [n]
  for (int i = 0; i < n; ++i) positions[i] = first + i;
  std::vector<float> x(n * d), q(n * d), attn(n * d);  // [n, d_model] each
  model.embed(tokens.data(), positions.data(), n, x.data());
  for (int l = 0; l < c.n_layer; ++l) {
    float* k = cache.k[l].data();  // [capacity, d_model]; rows first .. first+n-1 written now
    float* v = cache.v[l].data();
    model.qkv(l, x.data(), n, q.data(), k + first * d, v + first * d);
    detail::causal_attention(model, q.data(), k, v, first, n, attn.data());
    model.finish_block(l, attn.data(), n, x.data());
  }
  model.logits(x.data() + (n - 1) * d, 1, logits);
  cache.length = first + n;
}

// ---- Sampling ------------------------------------------------------------------------------

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

int argmax(std::span<const float> values) {
  int best = -1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    if (best < 0 || values[i] > values[best]) best = static_cast<int>(i);
  }
  if (best < 0) throw ModelError("sampling: every logit is NaN");
  return best;
}

Sampler::Sampler(const SamplingOptions& o) : o_(o) {
  if (!(o.temperature >= 0.0f) || !std::isfinite(o.temperature)) {
    throw ModelError("sampling: temperature must be a finite number >= 0");
  }
  if (o.top_k < 0) throw ModelError("sampling: top-k must be >= 0 (0 keeps every token)");
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) throw ModelError("sampling: top-p must be in (0, 1]");
  uint64_t state = o.seed;
  for (uint64_t& s : s_) s = splitmix64(state);
}

double Sampler::uniform() {
  // xoshiro256**
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return static_cast<double>(result >> 11) * 0x1.0p-53;
}

int Sampler::next(std::span<const float> logits) {
  if (o_.temperature == 0.0f) return argmax(logits);
  const int vocab = static_cast<int>(logits.size());
  const float best = logits[argmax(logits)];
  if (!std::isfinite(best)) throw ModelError("sampling: the largest logit is not finite");
  // Candidates: every id, best first when top-k or top-p must choose among them.
  order_.resize(vocab);
  for (int i = 0; i < vocab; ++i) order_[i] = i;
  auto better = [&](int a, int b) {
    const float la = std::isnan(logits[a]) ? -INFINITY : logits[a];
    const float lb = std::isnan(logits[b]) ? -INFINITY : logits[b];
    return la != lb ? la > lb : a < b;
  };
  int n = vocab;
  if (o_.top_k > 0 && o_.top_k < vocab) {
    n = o_.top_k;
    std::partial_sort(order_.begin(), order_.begin() + n, order_.end(), better);
  } else if (o_.top_p < 1.0f) {
    std::sort(order_.begin(), order_.end(), better);
  }
  // Weights in candidate order; NaN and -inf logits weigh 0.
  weight_.resize(n);
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    const float l = logits[order_[i]];
    weight_[i] = std::isnan(l) ? 0.0 : gpt2::exp((l - best) / o_.temperature);
    total += weight_[i];
  }
  if (o_.top_p < 1.0f) {
    const double target = static_cast<double>(o_.top_p) * total;
    double kept = 0.0;
    int m = 0;
    while (m < n && kept < target) kept += weight_[m++];
    n = std::max(m, 1);
    total = kept > 0.0 ? kept : weight_[0];
  }
  const double target = uniform() * total;
  double running = 0.0;
  int last_positive = order_[0];
  for (int i = 0; i < n; ++i) {
    if (weight_[i] <= 0.0) continue;
    running += weight_[i];
    last_positive = order_[i];
    if (running > target) return order_[i];
  }
  return last_positive;  // u * total rounded up to the total
}

// ---- Generation ----------------------------------------------------------------------------

Decoder cached_decoder(const Model& model, int capacity) {
  auto cache = std::make_shared<DecodeCache>(make_decode_cache(model, capacity));
  const Model* m = &model;
  Decoder d;
  d.prefill = [m, cache](std::span<const int> prompt) {
    cache->length = 0;
    std::vector<float> logits(m->config().vocab);  // [vocab]
    extend(*m, *cache, prompt, logits.data());
    return logits;
  };
  d.step = [m, cache](int token) {
    std::vector<float> logits(m->config().vocab);  // [vocab]
    extend(*m, *cache, std::span<const int>(&token, 1), logits.data());
    return logits;
  };
  return d;
}

Decoder no_cache_decoder(const Model& model) {
  const Model* m = &model;
  return no_cache_decoder([m](std::span<const int> tokens) { return m->forward(tokens); },
                          model.config().vocab);
}

Decoder no_cache_decoder(Forward forward, int vocab) {
  auto sequence = std::make_shared<std::vector<int>>();  // every token so far
  auto last_row = [forward = std::move(forward), sequence, vocab] {
    const std::vector<float> all = forward(*sequence);  // [n, vocab]
    return std::vector<float>(all.end() - vocab, all.end());
  };
  Decoder d;
  d.prefill = [sequence, last_row](std::span<const int> prompt) {
    if (prompt.empty()) throw ModelError("prefill: no tokens");
    sequence->assign(prompt.begin(), prompt.end());
    return last_row();
  };
  d.step = [sequence, last_row](int token) {
    sequence->push_back(token);
    return last_row();
  };
  return d;
}

namespace {
double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}
}  // namespace

GenerationStats generate(const Decoder& decoder, std::span<const int> prompt, int max_new_tokens,
                         Sampler& sampler, int stop_token,
                         const std::function<void(int)>& on_token) {
  if (prompt.empty()) throw ModelError("generate: the prompt has no tokens");
  GenerationStats stats;
  stats.prompt_tokens = static_cast<int>(prompt.size());
  const double t0 = now_s();
  std::vector<float> logits = decoder.prefill(prompt);  // [vocab]
  const double t1 = now_s();
  stats.prefill_s = t1 - t0;
  for (int i = 0; i < max_new_tokens; ++i) {
    const int token = sampler.next(logits);
    on_token(token);
    ++stats.new_tokens;
    if (token == stop_token || i + 1 == max_new_tokens) break;
    logits = decoder.step(token);
    ++stats.decode_steps;
  }
  stats.decode_s = now_s() - t1;
  return stats;
}

}  // namespace gpt2
