// The determinism contract (model/DETERMINISM.md), parts (a) and (b), and the promise the
// course rests on: a learner's cached decode loop, written with the public API and the
// ops.hpp helpers, gives forward()'s logits bit for bit. Part (c), compilers and flags,
// is scripts/determinism-check.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gpt2.hpp"
#include "grouped_query.hpp"
#include "kernels.hpp"
#include "latent.hpp"
#include "model_test_helpers.hpp"
#include "ops.hpp"
#include "rotary.hpp"
#include "variants.hpp"

namespace {

using model_test::same_bits;

// Logits of every position, computed the way a learner does in the decode stage: one
// token at a time, keys and values appended to a per-layer cache, attention written out
// with dot / softmax / weighted_sum. With prefill_rows > 0 the first prefill_rows tokens
// go through as one batch first (the prefill stage), with the causal loop by hand.
std::vector<float> hand_decode(const gpt2::Model& m, const std::vector<int>& tokens,
                               int prefill_rows = 0) {
  const gpt2::Config& c = m.config();
  const int D = c.d_model, H = c.n_head, hd = c.head_dim, T = static_cast<int>(tokens.size());
  const float scale = gpt2::attention_scale(hd);
  std::vector<std::vector<float>> k_cache(c.n_layer, std::vector<float>(T * D));  // [seq, d_model]
  std::vector<std::vector<float>> v_cache = k_cache;
  std::vector<float> out(static_cast<size_t>(T) * c.vocab);

  // Attention of query rows [first, first + n) against cache rows 0 .. row.
  auto attend = [&](int layer, const float* q, int first, int n, float* attn) {
    std::vector<float> scores(T);
    for (int i = 0; i < n; ++i) {
      const int pos = first + i;
      for (int h = 0; h < H; ++h) {
        const float* q_h = q + i * D + h * hd;
        for (int j = 0; j <= pos; ++j) {
          scores[j] = gpt2::dot(q_h, k_cache[layer].data() + j * D + h * hd, hd) * scale;
        }
        gpt2::softmax(scores.data(), pos + 1);
        gpt2::weighted_sum(scores.data(), v_cache[layer].data() + h * hd, pos + 1, D, hd,
                           attn + i * D + h * hd);
      }
    }
  };
  // Rows [first, first + n) through the whole model.
  auto step = [&](int first, int n) {
    std::vector<int> positions(n);
    for (int i = 0; i < n; ++i) positions[i] = first + i;
    std::vector<float> x(n * D), q(n * D), attn(n * D);
    m.embed(tokens.data() + first, positions.data(), n, x.data());
    for (int l = 0; l < c.n_layer; ++l) {
      m.qkv(l, x.data(), n, q.data(), k_cache[l].data() + first * D, v_cache[l].data() + first * D);
      attend(l, q.data(), first, n, attn.data());
      m.finish_block(l, attn.data(), n, x.data());
    }
    m.logits(x.data(), n, out.data() + static_cast<size_t>(first) * c.vocab);
  };
  if (prefill_rows > 0) step(0, prefill_rows);
  for (int pos = prefill_rows; pos < T; ++pos) step(pos, 1);
  return out;
}

std::vector<int> prompt(int n, int vocab) {
  std::vector<int> t(n);
  for (int i = 0; i < n; ++i) t[i] = static_cast<int>((i * 7919LL + 13) % vocab);
  return t;
}

TEST(determinism, small_model_cached_decode_equals_forward) {
  const gpt2::Model m = gpt2::Model::synthetic(2, model_test::small_config());
  const auto tokens = prompt(32, 97);  // the whole context
  const auto truth = m.forward(tokens);
  EXPECT_TRUE(same_bits(hand_decode(m, tokens), truth, 97));
  for (int prefill : {1, 5, 16, 32}) {
    EXPECT_TRUE(same_bits(hand_decode(m, tokens, prefill), truth, 97)) << "prefill " << prefill;
  }
}

TEST(determinism, gpt2_small_cached_decode_equals_forward) {
  const gpt2::Model& m = model_test::gpt2_small_model();
  const auto tokens = prompt(6, 50257);
  const auto truth = m.forward(tokens);
  EXPECT_TRUE(same_bits(hand_decode(m, tokens), truth, 50257));
  EXPECT_TRUE(same_bits(hand_decode(m, tokens, 4), truth, 50257)) << "prefill 4";
  // Not degenerate: the logits of the real-size synthetic model are spread out.
  const auto [lo, hi] = std::minmax_element(truth.begin(), truth.end());
  EXPECT_GT(*hi - *lo, 1.0f);
}

// A prefill of 70 tokens (two blocks of queries in the model's attention, full 6-row
// tiles and 64-column strips in the matrix products, heads of 64 as in GPT-2) against the
// learner's loop, with each vector path the CPU has: the same logits, bit for bit, on
// every path. (A model of 2 layers of width 128, so that it stays fast under ASan.)
TEST(determinism, prefill_equals_the_hand_loop_on_every_vector_path) {
  using gpt2::kernels::VectorPath;
  gpt2::Config c = model_test::small_config();
  c.n_head = 2;
  c.head_dim = 64;
  c.d_model = 128;
  c.n_ctx = 80;
  c.vocab = 200;
  const gpt2::Model m = gpt2::Model::synthetic(5, c);
  const auto tokens = prompt(70, c.vocab);
  const VectorPath saved = gpt2::kernels::vector_path();
  std::vector<float> first;
  for (VectorPath path : {VectorPath::sse2, VectorPath::avx2, VectorPath::avx512}) {
    if (!gpt2::kernels::cpu_has(path)) continue;
    gpt2::kernels::set_vector_path(path);
    const auto truth = m.forward(tokens);
    EXPECT_TRUE(same_bits(hand_decode(m, tokens, 70), truth, c.vocab))
        << gpt2::kernels::vector_path_name(path);
    EXPECT_TRUE(same_bits(hand_decode(m, tokens, 7), truth, c.vocab))
        << gpt2::kernels::vector_path_name(path) << ", prefill 7";
    if (first.empty()) first = truth;
    EXPECT_TRUE(same_bits(truth, first, c.vocab)) << gpt2::kernels::vector_path_name(path);
  }
  gpt2::kernels::set_vector_path(saved);
}

// (a) Each piece on rows alone and on the same rows in batches of several sizes.
void check_rows_alone_equal_batch(const gpt2::Model& m, const std::vector<int>& batch_sizes) {
  const gpt2::Config& c = m.config();
  const int D = c.d_model;
  const int max_rows = batch_sizes.back();
  const auto tokens = prompt(max_rows, c.vocab);
  std::vector<int> positions(max_rows);
  for (int i = 0; i < max_rows; ++i) positions[i] = (i * 5) % c.n_ctx;
  // Inputs: embeddings pushed through one block so every row is a realistic residual.
  std::vector<float> x(max_rows * D), attn(max_rows * D), q(max_rows * D), k(max_rows * D),
      v(max_rows * D);
  m.embed(tokens.data(), positions.data(), max_rows, x.data());
  for (int i = 0; i < max_rows * D; ++i) attn[i] = x[(i * 7) % (max_rows * D)] * 3.0f;
  m.finish_block(0, attn.data(), max_rows, x.data());

  // Every piece on every row alone.
  std::vector<float> q1(max_rows * D), k1(max_rows * D), v1(max_rows * D),
      fb1 = x, lg1(static_cast<size_t>(max_rows) * c.vocab), e1(max_rows * D);
  for (int r = 0; r < max_rows; ++r) {
    m.embed(&tokens[r], &positions[r], 1, e1.data() + r * D);
    m.qkv(c.n_layer - 1, x.data() + r * D, 1, q1.data() + r * D, k1.data() + r * D,
          v1.data() + r * D);
    m.finish_block(c.n_layer - 1, attn.data() + r * D, 1, fb1.data() + r * D);
    m.logits(x.data() + r * D, 1, lg1.data() + static_cast<size_t>(r) * c.vocab);
  }
  for (int n : batch_sizes) {
    std::vector<float> e(n * D), fb(x.begin(), x.begin() + n * D),
        lg(static_cast<size_t>(n) * c.vocab);
    m.embed(tokens.data(), positions.data(), n, e.data());
    m.qkv(c.n_layer - 1, x.data(), n, q.data(), k.data(), v.data());
    m.finish_block(c.n_layer - 1, attn.data(), n, fb.data());
    m.logits(x.data(), n, lg.data());
    auto head = [](const std::vector<float>& a, size_t count) {
      return std::vector<float>(a.begin(), a.begin() + count);
    };
    EXPECT_TRUE(same_bits(e, head(e1, n * D), D)) << "embed, batch " << n;
    EXPECT_TRUE(same_bits(head(q, n * D), head(q1, n * D), D)) << "q, batch " << n;
    EXPECT_TRUE(same_bits(head(k, n * D), head(k1, n * D), D)) << "k, batch " << n;
    EXPECT_TRUE(same_bits(head(v, n * D), head(v1, n * D), D)) << "v, batch " << n;
    EXPECT_TRUE(same_bits(fb, head(fb1, n * D), D)) << "finish_block, batch " << n;
    EXPECT_TRUE(same_bits(lg, head(lg1, static_cast<size_t>(n) * c.vocab), c.vocab))
        << "logits, batch " << n;
  }
}

TEST(determinism, small_model_row_alone_equals_row_in_batch) {
  gpt2::Model m = gpt2::Model::synthetic(3, model_test::small_config());
  for (int threads : {1, 2}) {
    m.set_threads(threads);
    check_rows_alone_equal_batch(m, {1, 2, 3, 7, 16});
  }
}

TEST(determinism, gpt2_small_row_alone_equals_row_in_batch) {
  check_rows_alone_equal_batch(model_test::gpt2_small_model(), {1, 2, 3, 7, 16});
}

// (b) Any thread count.
TEST(determinism, small_model_any_thread_count) {
  gpt2::Model m = gpt2::Model::synthetic(4, model_test::small_config());
  const auto tokens = prompt(32, 97);
  m.set_threads(1);
  const auto one = m.forward(tokens);
  for (int threads : {2, 3, 4, 7}) {
    m.set_threads(threads);
    EXPECT_TRUE(same_bits(m.forward(tokens), one, 97)) << threads << " threads";
  }
}

TEST(determinism, gpt2_small_any_thread_count) {
  gpt2::Model& m = model_test::gpt2_small_model();
  const int default_threads = m.threads();
  const auto tokens = prompt(5, 50257);
  const auto by_default = m.forward(tokens);
  for (int threads : {1, 2, 3, 4}) {
    m.set_threads(threads);
    EXPECT_TRUE(same_bits(m.forward(tokens), by_default, 50257)) << threads << " threads";
  }
  m.set_threads(default_threads);
}

// ---- the variants (grouped_query.hpp, rotary.hpp, latent.hpp) ------------------------------

// Each variant's own pieces on rows alone and on the same rows in batches of several
// sizes (the pieces they share with GPT-2 are checked above).
void check_variant_rows_alone_equal_batch(const gpt2::Model& m,
                                          const std::vector<int>& batch_sizes) {
  const gpt2::Config& c = m.config();
  const int D = c.d_model, H = c.n_head, max_rows = batch_sizes.back(), layer = c.n_layer - 1;
  const auto tokens = prompt(max_rows, c.vocab);
  std::vector<int> positions(max_rows);
  for (int i = 0; i < max_rows; ++i) positions[i] = (i * 5) % c.n_ctx;
  std::vector<float> x(max_rows * D), attn(max_rows * D);
  m.embed(tokens.data(), positions.data(), max_rows, x.data());
  for (int i = 0; i < max_rows * D; ++i) attn[i] = x[(i * 7) % (max_rows * D)] * 3.0f;
  m.finish_block(0, attn.data(), max_rows, x.data());

  const gpt2::GroupedQueryModel gq(m, H / 2);
  const gpt2::RotaryModel rot(m);
  const gpt2::LatentModel lat(m, 11);
  const int W = gq.kv_width(), R = lat.row_dim(), Q = H * lat.query_dim(), O = H * 128;
  // Every piece, row by row (a [rows, width] buffer per output).
  struct Outputs {
    std::vector<float> q, k, v, rotated, q_nope, q_rope, rows, absorbed, attn, keys, values;
  };
  auto run = [&](int r0, int n, Outputs& o) {
    auto at = [](std::vector<float>& b, int r, int w) {
      return b.data() + static_cast<size_t>(r) * w;
    };
    gq.qkv(layer, x.data() + r0 * D, n, at(o.q, r0, D), at(o.k, r0, W), at(o.v, r0, W));
    std::copy(x.begin() + r0 * D, x.begin() + (r0 + n) * D, o.rotated.begin() + r0 * D);
    rot.rotate(at(o.rotated, r0, D), n, positions.data() + r0);
    lat.project(layer, x.data() + r0 * D, positions.data() + r0, n, at(o.q_nope, r0, D),
                at(o.q_rope, r0, D), at(o.rows, r0, R));
    lat.absorb_query(layer, at(o.q_nope, r0, D), at(o.q_rope, r0, D), n, at(o.absorbed, r0, Q));
    // o_h: the absorbed queries' first 128 floats of each head stand in for a weighted latent.
    std::vector<float> o_lat(static_cast<size_t>(n) * O);
    for (int r = 0; r < n; ++r)
      for (int h = 0; h < H; ++h)
        std::copy_n(at(o.absorbed, r0 + r, Q) + h * lat.query_dim(), 128,
                    o_lat.data() + r * O + h * 128);
    lat.output_from_latent(layer, o_lat.data(), n, at(o.attn, r0, D));
    lat.expand_keys(layer, at(o.rows, r0, R), n, at(o.keys, r0, H * 128));
    lat.expand_values(layer, at(o.rows, r0, R), n, at(o.values, r0, D));
  };
  auto make = [&] {
    Outputs o;
    for (auto* b : {&o.q, &o.rotated, &o.q_nope, &o.q_rope, &o.attn, &o.values})
      b->resize(max_rows * D);
    o.k.resize(max_rows * W);
    o.v.resize(max_rows * W);
    o.rows.resize(max_rows * R);
    o.absorbed.resize(max_rows * Q);
    o.keys.resize(max_rows * H * 128);
    return o;
  };
  Outputs alone = make();
  for (int r = 0; r < max_rows; ++r) run(r, 1, alone);
  for (int n : batch_sizes) {
    Outputs batch = make();
    run(0, n, batch);
    auto head = [](const std::vector<float>& a, size_t count) {
      return std::vector<float>(a.begin(), a.begin() + count);
    };
    auto same = [&](const std::vector<float>& a, const std::vector<float>& b, int w,
                    const char* what) {
      EXPECT_TRUE(same_bits(head(a, n * w), head(b, n * w), w)) << what << ", batch " << n;
    };
    same(batch.q, alone.q, D, "grouped-query q");
    same(batch.k, alone.k, W, "grouped-query k");
    same(batch.v, alone.v, W, "grouped-query v");
    same(batch.rotated, alone.rotated, D, "rotary rotate");
    same(batch.q_nope, alone.q_nope, D, "latent q_nope");
    same(batch.q_rope, alone.q_rope, D, "latent q_rope");
    same(batch.rows, alone.rows, R, "latent rows");
    same(batch.absorbed, alone.absorbed, Q, "latent absorb_query");
    same(batch.attn, alone.attn, D, "latent output_from_latent");
    same(batch.keys, alone.keys, H * 128, "latent expand_keys");
    same(batch.values, alone.values, D, "latent expand_values");
  }
}

TEST(determinism, variants_row_alone_equals_row_in_batch) {
  gpt2::Model m = gpt2::Model::synthetic(3, model_test::variant_config());
  for (int threads : {1, 2}) {
    m.set_threads(threads);
    check_variant_rows_alone_equal_batch(m, {1, 2, 3, 7, 16, 30});
  }
}

TEST(determinism, gpt2_small_variants_row_alone_equals_row_in_batch) {
  check_variant_rows_alone_equal_batch(model_test::gpt2_small_model(), {1, 2, 3, 7, 16});
}

std::vector<gpt2::Variant> every_variant() {
  std::vector<gpt2::Variant> out;
  for (const char* name : {"gqa-1", "gqa-2", "rotary", "streaming-2-5", "latent"})
    out.push_back(gpt2::Variant::parse(name, 13));
  return out;
}

TEST(determinism, variants_any_thread_count) {
  gpt2::Model m = gpt2::Model::synthetic(4, model_test::variant_config());
  const auto tokens = prompt(40, 300);
  for (const gpt2::Variant& v : every_variant()) {
    m.set_threads(1);
    const auto one = gpt2::variant_forward(m, v)(tokens);
    for (int threads : {2, 3, 7}) {
      m.set_threads(threads);
      EXPECT_TRUE(same_bits(gpt2::variant_forward(m, v)(tokens), one, 300))
          << v.name() << ", " << threads << " threads";
    }
  }
  m.set_threads(1);
  const gpt2::LatentModel lat(m, 13);
  const auto expanded = lat.forward_expanded(tokens);
  m.set_threads(3);
  EXPECT_TRUE(same_bits(lat.forward_expanded(tokens), expanded, 300)) << "latent, expanded order";
}

TEST(determinism, gpt2_small_variants_any_thread_count) {
  gpt2::Model& m = model_test::gpt2_small_model();
  const int default_threads = m.threads();
  const auto tokens = prompt(5, 50257);
  for (const gpt2::Variant& v : every_variant()) {
    m.set_threads(default_threads);
    const auto by_default = gpt2::variant_forward(m, v)(tokens);
    for (int threads : {1, 3}) {
      m.set_threads(threads);
      EXPECT_TRUE(same_bits(gpt2::variant_forward(m, v)(tokens), by_default, 50257))
          << v.name() << ", " << threads << " threads";
    }
  }
  m.set_threads(default_threads);
}

// Each variant's forward (blocks of 64 queries, 6-row tiles) against its cached loop, on
// every vector path the CPU has.
TEST(determinism, variants_prefill_equals_the_cached_loop_on_every_vector_path) {
  using gpt2::kernels::VectorPath;
  const gpt2::Model m = gpt2::Model::synthetic(5, model_test::variant_config());
  const auto tokens = prompt(70, 300);
  const VectorPath saved = gpt2::kernels::vector_path();
  for (const gpt2::Variant& v : every_variant()) {
    if (v.kind == gpt2::Variant::Kind::streaming) continue;  // its forward is a decode
    std::vector<float> first;
    for (VectorPath path : {VectorPath::sse2, VectorPath::avx2, VectorPath::avx512}) {
      if (!gpt2::kernels::cpu_has(path)) continue;
      gpt2::kernels::set_vector_path(path);
      const auto truth = gpt2::variant_forward(m, v)(tokens);
      gpt2::Decoder d = gpt2::variant_decoder(m, v, 70);
      EXPECT_TRUE(same_bits(model_test::decoded_rows(d, tokens, 66),
                            model_test::rows_from(truth, 65, 300), 300))
          << v.name() << ", " << gpt2::kernels::vector_path_name(path);
      if (first.empty()) first = truth;
      EXPECT_TRUE(same_bits(truth, first, 300))
          << v.name() << ", " << gpt2::kernels::vector_path_name(path);
    }
  }
  gpt2::kernels::set_vector_path(saved);
}

}  // namespace
