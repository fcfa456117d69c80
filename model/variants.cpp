// The variants' cached loops (variants.hpp), written as a learner writes them: the
// variant's public pieces, and attention by hand with ops.hpp.
#include "variants.hpp"

#include <functional>
#include <string>

#include "detail.hpp"
#include "grouped_query.hpp"
#include "latent.hpp"
#include "ops.hpp"
#include "rotary.hpp"

namespace gpt2 {

namespace {

ModelError bad_variant(const std::string& name) {
  return ModelError("unknown model variant '" + name +
                    "' (gpt2, gqa-N for N K/V heads, rotary, streaming-SINK-WINDOW, latent)");
}

// A non-negative decimal integer, or -1.
int parse_count(const std::string& s) {
  if (s.empty() || s.size() > 6) return -1;
  int v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return -1;
    v = v * 10 + (ch - '0');
  }
  return v;
}

// A sequence's cache: per layer, a row of `k_rows` floats a position (keys, or the latent
// cache's one row) and one of `v_rows` (values; 0: none); `length` positions filled.
struct Cache {
  int capacity = 0;
  int length = 0;
  std::vector<std::vector<float>> k, v;  // [n_layer] of [capacity, k_rows], [capacity, v_rows]

  Cache(const Model& m, int cap, size_t k_rows, size_t v_rows) : capacity(cap) {
    if (cap < 1 || cap > m.config().n_ctx)
      throw ModelError("decoder: capacity " + std::to_string(cap) + " is outside 1 .. " +
                       std::to_string(m.config().n_ctx));
    const size_t n_layer = static_cast<size_t>(m.config().n_layer);
    k.assign(n_layer, std::vector<float>(static_cast<size_t>(cap) * k_rows));
    v.assign(n_layer, std::vector<float>(static_cast<size_t>(cap) * v_rows));
  }
};

// Attention by hand, the loop of ops.hpp, of n query rows at positions past .. past+n-1,
// each over the cached rows 0 .. its own, in a HeadLayout's places:
//   scores[j] = dot(q_h, k_j of K/V head h / group, dim) * scale;  softmax;
//   out_h = weighted_sum(scores, values, ..., value_dim)
void attend_by_hand(const detail::HeadLayout& a, int past, int n) {
  std::vector<float> scores(static_cast<size_t>(past + n));
  for (int i = 0; i < n; ++i) {
    const int seen = past + i + 1;
    for (int h = 0; h < a.n_head; ++h) {
      const size_t g = static_cast<size_t>(h / a.group);
      const float* q = a.q + i * a.q_stride + h * a.q_head;
      for (int j = 0; j < seen; ++j)
        scores[j] = dot(q, a.k + j * a.k_stride + g * a.k_head, a.dim) * a.scale;
      softmax(scores.data(), seen);
      weighted_sum(scores.data(), a.v + g * a.v_head, seen, static_cast<int>(a.v_stride),
                   a.value_dim, a.out + i * a.out_stride + h * a.out_head);
    }
  }
}

// The loop every decoder shares: `tokens` at the positions after the cached ones, embedded
// by embed(tokens, positions, n, x), through every layer (layer(l, x, positions, past, n,
// attn) appends the rows to the cache and attends; then finish_block), and the logits of
// the last row.
template <class Embed, class Layer>
std::vector<float> run(const Model& base, Cache& cache, std::span<const int> tokens,
                       const Embed& embed, const Layer& layer) {
  const Config& c = base.config();
  const int n = static_cast<int>(tokens.size()), past = cache.length;
  if (n < 1) throw ModelError("decoder: no tokens");
  if (past + n > cache.capacity)
    throw ModelError("decoder: " + std::to_string(past) + " cached + " + std::to_string(n) +
                     " new positions exceed the cache's " + std::to_string(cache.capacity));
  const size_t d = static_cast<size_t>(c.d_model);
  std::vector<int> positions(static_cast<size_t>(n));  // [n]: past .. past + n - 1
  for (int i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = past + i;
  std::vector<float> x(n * d), attn(n * d);  // [n, d_model]
  embed(tokens.data(), positions.data(), n, x.data());
  for (int l = 0; l < c.n_layer; ++l) {
    layer(l, x.data(), positions.data(), past, n, attn.data());
    base.finish_block(l, attn.data(), n, x.data());
  }
  cache.length = past + n;
  std::vector<float> logits(static_cast<size_t>(c.vocab));
  base.logits(x.data() + (n - 1) * d, 1, logits.data());
  return logits;
}

Decoder from_run(std::function<std::vector<float>(std::span<const int>)> f) {
  return Decoder{f, [f](int token) { return f(std::span<const int>(&token, 1)); }};
}

// ---- grouped-query: [n_kv_heads, seq, 64] per layer ------------------------------------

Decoder grouped_query(const Model& base, int n_kv_heads, int capacity) {
  auto model = std::make_shared<GroupedQueryModel>(base, n_kv_heads);
  const int kv = model->kv_width();
  auto cache = std::make_shared<Cache>(base, capacity, size_t(kv), size_t(kv));
  return from_run([model, cache, kv](std::span<const int> tokens) {
    std::vector<float> q(tokens.size() * model->config().d_model);
    auto layer = [&](int l, const float* x, const int*, int past, int n, float* attn) {
      float* k = cache->k[l].data();  // [capacity, kv_width]
      float* v = cache->v[l].data();
      model->qkv(l, x, n, q.data(), k + past * kv, v + past * kv);
      attend_by_hand(
          detail::heads_of(model->config(), q.data(), k, v, size_t(kv), model->group_size(), attn),
          past, n);
    };
    auto embed = [&](const int* t, const int* p, int n, float* x) { model->embed(t, p, n, x); };
    return run(model->base(), *cache, tokens, embed, layer);
  });
}

// ---- rotary: keys cached after rotation -------------------------------------------------

Decoder rotary(const Model& base, int capacity) {
  auto model = std::make_shared<RotaryModel>(base);
  const int d = base.config().d_model;
  auto cache = std::make_shared<Cache>(base, capacity, size_t(d), size_t(d));
  return from_run([model, cache, d](std::span<const int> tokens) {
    std::vector<float> q(tokens.size() * d);
    auto layer = [&](int l, const float* x, const int* positions, int past, int n, float* attn) {
      float* k = cache->k[l].data();  // [capacity, d_model], rotated by position
      float* v = cache->v[l].data();
      model->qkv(l, x, n, q.data(), k + past * d, v + past * d);
      model->rotate(q.data(), n, positions);
      model->rotate(k + past * d, n, positions);
      attend_by_hand(detail::heads_of(model->config(), q.data(), k, v, size_t(d), 1, attn), past,
                     n);
    };
    auto embed = [&](const int* t, const int*, int n, float* x) { model->embed(t, n, x); };
    return run(model->base(), *cache, tokens, embed, layer);
  });
}

// ---- latent: one [c ; k_rope] row per position and layer --------------------------------

Decoder latent(const Model& base, uint64_t seed, int capacity) {
  auto model = std::make_shared<LatentModel>(base, seed);
  auto cache = std::make_shared<Cache>(base, capacity, size_t(model->row_dim()), 0);
  return from_run([model, cache](std::span<const int> tokens) {
    const Config& c = model->config();
    const size_t n = tokens.size(), d = c.d_model, H = c.n_head, L = LatentModel::LATENT;
    const size_t rd = model->row_dim(), qd = model->query_dim();
    std::vector<float> q_nope(n * d), q_rope(n * d), q(n * H * qd), o(n * H * L);
    auto layer = [&](int l, const float* x, const int* positions, int past, int n_rows,
                     float* attn) {
      float* cached = cache->k[l].data();  // [capacity, 192]: [c ; k_rope] rows
      model->project(l, x, positions, n_rows, q_nope.data(), q_rope.data(), cached + past * rd);
      model->absorb_query(l, q_nope.data(), q_rope.data(), n_rows, q.data());
      detail::HeadLayout a;  // 12 query heads of 192 over one shared row per position
      a.n_head = a.group = c.n_head;
      a.dim = static_cast<int>(qd);
      a.value_dim = static_cast<int>(L);  // the row's c
      a.scale = model->scale();
      a.q = q.data();
      a.q_stride = H * qd;
      a.q_head = qd;
      a.k = a.v = cached;
      a.k_stride = a.v_stride = rd;
      a.out = o.data();
      a.out_stride = H * L;
      a.out_head = L;
      attend_by_hand(a, past, n_rows);
      model->output_from_latent(l, o.data(), n_rows, attn);
    };
    auto embed = [&](const int* t, const int*, int n_rows, float* x) {
      model->embed(t, n_rows, x);
    };
    return run(model->base(), *cache, tokens, embed, layer);
  });
}

}  // namespace

Variant Variant::parse(const std::string& name, uint64_t seed) {
  Variant v;
  v.seed = seed;
  if (name == "gpt2") return v;
  if (name == "rotary") {
    v.kind = Kind::rotary;
    return v;
  }
  if (name == "latent") {
    v.kind = Kind::latent;
    return v;
  }
  if (name.rfind("gqa-", 0) == 0) {
    v.kind = Kind::grouped_query;
    v.n_kv_heads = parse_count(name.substr(4));
    if (v.n_kv_heads < 1) throw bad_variant(name);
    return v;
  }
  if (name.rfind("streaming-", 0) == 0) {
    const std::string rest = name.substr(10);
    const size_t dash = rest.find('-');
    if (dash == std::string::npos) throw bad_variant(name);
    v.kind = Kind::streaming;
    v.sink = parse_count(rest.substr(0, dash));
    v.window = parse_count(rest.substr(dash + 1));
    if (v.sink < 0 || v.window < 1) throw bad_variant(name);
    return v;
  }
  throw bad_variant(name);
}

std::string Variant::name() const {
  switch (kind) {
    case Kind::gpt2:
      return "gpt2";
    case Kind::grouped_query:
      return "gqa-" + std::to_string(n_kv_heads);
    case Kind::rotary:
      return "rotary";
    case Kind::streaming:
      return "streaming-" + std::to_string(sink) + "-" + std::to_string(window);
    case Kind::latent:
      return "latent";
  }
  return "?";
}

Forward variant_forward(const Model& base, const Variant& v) {
  const Model* m = &base;
  switch (v.kind) {
    case Variant::Kind::gpt2:
      return [m](std::span<const int> tokens) { return m->forward(tokens); };
    case Variant::Kind::grouped_query: {
      auto gq = std::make_shared<GroupedQueryModel>(base, v.n_kv_heads);
      return [gq](std::span<const int> tokens) { return gq->forward(tokens); };
    }
    case Variant::Kind::rotary: {
      auto r = std::make_shared<RotaryModel>(base);
      return [r](std::span<const int> tokens) { return r->forward(tokens); };
    }
    case Variant::Kind::streaming: {
      auto r = std::make_shared<RotaryModel>(base);
      const int sink = v.sink, window = v.window;
      return [r, sink, window](std::span<const int> tokens) {
        return r->forward_streaming(tokens, sink, window);
      };
    }
    case Variant::Kind::latent: {
      auto lm = std::make_shared<LatentModel>(base, v.seed);
      return [lm](std::span<const int> tokens) { return lm->forward(tokens); };
    }
  }
  throw ModelError("variant_forward: unknown variant");
}

Decoder variant_no_cache_decoder(const Model& base, const Variant& v) {
  return no_cache_decoder(variant_forward(base, v), base.config().vocab);
}

Decoder variant_decoder(const Model& base, const Variant& v, int capacity) {
  switch (v.kind) {
    case Variant::Kind::gpt2:
      return cached_decoder(base, capacity);
    case Variant::Kind::grouped_query:
      return grouped_query(base, v.n_kv_heads, capacity);
    case Variant::Kind::rotary:
      return rotary(base, capacity);
    case Variant::Kind::latent:
      return latent(base, v.seed, capacity);
    case Variant::Kind::streaming:
      break;
  }
  throw ModelError("the " + v.name() +
                   " variant has no cached decoder: its forward is one already");
}

}  // namespace gpt2
