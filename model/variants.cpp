// The variants' cached loops (variants.hpp), written as a learner writes them: the
// variant's public pieces, and attention by hand with ops.hpp.
#include "variants.hpp"

#include <string>

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

// The positions [past, past + n).
std::vector<int> positions_from(int past, int n) {
  std::vector<int> p(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<size_t>(i)] = past + i;
  return p;
}

void check_room(int past, int n, int capacity) {
  if (n < 1) throw ModelError("decoder: no tokens");
  if (past + n > capacity)
    throw ModelError("decoder: " + std::to_string(past) + " cached + " + std::to_string(n) +
                     " new positions exceed the cache's " + std::to_string(capacity));
}

// One sequence through a variant with a per-layer cache: `rows` floats a position and
// layer. Step(layer, x, first, n) runs the layer's part for n rows at positions first ..
// first+n-1, appending to the cache; the loop around it is the same for every variant.
struct Loop {
  const Model* base = nullptr;
  int capacity = 0;
  int length = 0;
  std::vector<std::vector<float>> cache;  // [n_layer] of [capacity, rows]

  Loop(const Model& m, int cap, size_t rows) : base(&m), capacity(cap) {
    if (cap < 1 || cap > m.config().n_ctx)
      throw ModelError("decoder: capacity " + std::to_string(cap) + " is outside 1 .. " +
                       std::to_string(m.config().n_ctx));
    cache.assign(static_cast<size_t>(m.config().n_layer),
                 std::vector<float>(static_cast<size_t>(cap) * rows));
  }
};

// ---- grouped-query: [n_kv_heads, seq, 64] per layer ------------------------------------

Decoder grouped_query(const Model& base, int n_kv_heads, int capacity) {
  auto model = std::make_shared<GroupedQueryModel>(base, n_kv_heads);
  const int kv = model->kv_width();
  auto keys = std::make_shared<Loop>(base, capacity, static_cast<size_t>(kv));
  auto values = std::make_shared<Loop>(base, capacity, static_cast<size_t>(kv));
  auto run = [model, keys, values, kv](std::span<const int> tokens) {
    const Config& c = model->config();
    const int n = static_cast<int>(tokens.size()), past = keys->length;
    check_room(past, n, keys->capacity);
    const size_t d = static_cast<size_t>(c.d_model), hd = static_cast<size_t>(c.head_dim);
    const std::vector<int> pos = positions_from(past, n);
    std::vector<float> x(n * d), q(n * d), attn(n * d), scores(static_cast<size_t>(past + n));
    model->embed(tokens.data(), pos.data(), n, x.data());
    const float scale = attention_scale(c.head_dim);
    for (int l = 0; l < c.n_layer; ++l) {
      float* k = keys->cache[l].data();  // [capacity, kv_width]
      float* v = values->cache[l].data();
      model->qkv(l, x.data(), n, q.data(), k + past * kv, v + past * kv);
      for (int i = 0; i < n; ++i) {
        const int seen = past + i + 1;  // positions 0 .. past + i
        for (int h = 0; h < c.n_head; ++h) {
          const size_t g = static_cast<size_t>(model->kv_head(h)) * hd;
          for (int j = 0; j < seen; ++j)
            scores[j] = dot(q.data() + i * d + h * hd, k + static_cast<size_t>(j) * kv + g, c.head_dim) * scale;
          softmax(scores.data(), seen);
          weighted_sum(scores.data(), v + g, seen, kv, c.head_dim, attn.data() + i * d + h * hd);
        }
      }
      model->finish_block(l, attn.data(), n, x.data());
    }
    keys->length = values->length = past + n;
    std::vector<float> logits(static_cast<size_t>(c.vocab));
    model->logits(x.data() + (n - 1) * d, 1, logits.data());
    return logits;
  };
  return Decoder{run, [run](int token) { return run(std::span<const int>(&token, 1)); }};
}

// ---- rotary: keys cached after rotation -------------------------------------------------

Decoder rotary(const Model& base, int capacity) {
  auto model = std::make_shared<RotaryModel>(base);
  const size_t d = static_cast<size_t>(base.config().d_model);
  auto keys = std::make_shared<Loop>(base, capacity, d);
  auto values = std::make_shared<Loop>(base, capacity, d);
  auto run = [model, keys, values, d](std::span<const int> tokens) {
    const Config& c = model->config();
    const int n = static_cast<int>(tokens.size()), past = keys->length;
    check_room(past, n, keys->capacity);
    const size_t hd = static_cast<size_t>(c.head_dim);
    const std::vector<int> pos = positions_from(past, n);
    std::vector<float> x(n * d), q(n * d), attn(n * d), scores(static_cast<size_t>(past + n));
    model->embed(tokens.data(), n, x.data());
    const float scale = attention_scale(c.head_dim);
    for (int l = 0; l < c.n_layer; ++l) {
      float* k = keys->cache[l].data();  // [capacity, d_model], rotated by position
      float* v = values->cache[l].data();
      model->qkv(l, x.data(), n, q.data(), k + past * d, v + past * d);
      model->rotate(q.data(), n, pos.data());
      model->rotate(k + past * d, n, pos.data());
      for (int i = 0; i < n; ++i) {
        const int seen = past + i + 1;
        for (int h = 0; h < c.n_head; ++h) {
          for (int j = 0; j < seen; ++j)
            scores[j] = dot(q.data() + i * d + h * hd, k + j * d + h * hd, c.head_dim) * scale;
          softmax(scores.data(), seen);
          weighted_sum(scores.data(), v + h * hd, seen, static_cast<int>(d), c.head_dim,
                       attn.data() + i * d + h * hd);
        }
      }
      model->finish_block(l, attn.data(), n, x.data());
    }
    keys->length = values->length = past + n;
    std::vector<float> logits(static_cast<size_t>(c.vocab));
    model->logits(x.data() + (n - 1) * d, 1, logits.data());
    return logits;
  };
  return Decoder{run, [run](int token) { return run(std::span<const int>(&token, 1)); }};
}

// ---- latent: one [c ; k_rope] row per position and layer --------------------------------

Decoder latent(const Model& base, uint64_t seed, int capacity) {
  auto model = std::make_shared<LatentModel>(base, seed);
  const int rd = model->row_dim();
  auto rows = std::make_shared<Loop>(base, capacity, static_cast<size_t>(rd));
  auto run = [model, rows, rd](std::span<const int> tokens) {
    const Config& c = model->config();
    const int n = static_cast<int>(tokens.size()), past = rows->length;
    check_room(past, n, rows->capacity);
    const size_t d = static_cast<size_t>(c.d_model), H = static_cast<size_t>(c.n_head);
    const size_t qd = static_cast<size_t>(model->query_dim()), L = LatentModel::LATENT;
    const std::vector<int> pos = positions_from(past, n);
    std::vector<float> x(n * d), q_nope(n * d), q_rope(n * d), attn(n * d);
    std::vector<float> q(n * H * qd), o(n * H * L), scores(static_cast<size_t>(past + n));
    model->embed(tokens.data(), n, x.data());
    const float scale = model->scale();
    for (int l = 0; l < c.n_layer; ++l) {
      float* cached = rows->cache[l].data();  // [capacity, 192]
      model->project(l, x.data(), pos.data(), n, q_nope.data(), q_rope.data(), cached + past * rd);
      model->absorb_query(l, q_nope.data(), q_rope.data(), n, q.data());
      for (int i = 0; i < n; ++i) {
        const int seen = past + i + 1;
        for (size_t h = 0; h < H; ++h) {
          for (int j = 0; j < seen; ++j)
            scores[j] = dot(q.data() + (i * H + h) * qd, cached + j * rd, static_cast<int>(qd)) * scale;
          softmax(scores.data(), seen);
          weighted_sum(scores.data(), cached, seen, rd, static_cast<int>(L), o.data() + (i * H + h) * L);
        }
      }
      model->output_from_latent(l, o.data(), n, attn.data());
      model->finish_block(l, attn.data(), n, x.data());
    }
    rows->length = past + n;
    std::vector<float> logits(static_cast<size_t>(c.vocab));
    model->logits(x.data() + (n - 1) * d, 1, logits.data());
    return logits;
  };
  return Decoder{run, [run](int token) { return run(std::span<const int>(&token, 1)); }};
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

VariantForward variant_forward(const Model& base, const Variant& v) {
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
  auto sequence = std::make_shared<std::vector<int>>();  // every token so far
  const size_t vocab = static_cast<size_t>(base.config().vocab);
  auto last_row = [forward = variant_forward(base, v), sequence, vocab] {
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
  throw ModelError("the " + v.name() + " variant has no cached decoder: its forward is one already");
}

}  // namespace gpt2
