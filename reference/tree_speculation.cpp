// Reference solution for src/tree_speculation.cpp (stage tree-speculation).
#include "course/tree_speculation.hpp"

#include <stdexcept>
#include <string>

#include "ops.hpp"

namespace course {

namespace {

constexpr int kMaxPositions = 1024;  // GPT-2's wpe rows

void check_parents(std::span<const DraftNode> nodes) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].parent < -1 || nodes[i].parent >= int(i))
      throw std::invalid_argument("draft node " + std::to_string(i) + "'s parent is " +
                                  std::to_string(nodes[i].parent) +
                                  ": -1 or an earlier node's index");
}

void check_token(const gpt2::Model& model, int token) {
  if (token < 0 || token >= model.config().vocab)
    throw std::invalid_argument("token id " + std::to_string(token) + " is outside 0 .. " +
                                std::to_string(model.config().vocab - 1));
}

}  // namespace

std::vector<uint8_t> tree_mask(std::span<const DraftNode> nodes) {
  check_parents(nodes);
  const size_t n1 = nodes.size() + 1;
  std::vector<uint8_t> mask(n1 * n1, 0);  // [n1, n1]
  mask[0] = 1;                            // the root sees itself
  for (size_t i = 0; i < nodes.size(); ++i) {
    // A node sees what its parent sees, and itself.
    const size_t row = i + 1, parent = size_t(nodes[i].parent + 1);
    std::copy(mask.begin() + std::ptrdiff_t(parent * n1),
              mask.begin() + std::ptrdiff_t((parent + 1) * n1),
              mask.begin() + std::ptrdiff_t(row * n1));
    mask[row * n1 + row] = 1;
  }
  return mask;
}

TreeVerdict verify_tree(const gpt2::Model& model, ModelCache& cache, int root,
                        std::span<const DraftNode> nodes) {
  const std::vector<uint8_t> mask = tree_mask(nodes);
  const int n1 = int(nodes.size()) + 1;  // rows: the root, then the nodes
  const int length = cache.layer(0).length();
  std::vector<int> tokens(static_cast<size_t>(n1)),
      positions(static_cast<size_t>(n1));  // [n1] each
  tokens[0] = root;
  positions[0] = length;
  for (int i = 0; i < n1 - 1; ++i) {
    tokens[size_t(i) + 1] = nodes[size_t(i)].token;
    positions[size_t(i) + 1] =
        positions[size_t(nodes[size_t(i)].parent + 1)] + 1;  // one deeper than its parent
  }
  for (int r = 0; r < n1; ++r) {
    check_token(model, tokens[size_t(r)]);
    if (positions[size_t(r)] >= kMaxPositions)
      throw std::length_error("draft row " + std::to_string(r) + " would be at position " +
                              std::to_string(positions[size_t(r)]) +
                              ": GPT-2 has position embeddings for 0 .. 1023 only");
  }

  const size_t rows = size_t(n1) * d_model;
  std::vector<float> x(rows);                                // [n1, d_model] residual stream
  std::vector<float> q(rows), attn(rows);                    // [n1, d_model] each
  std::vector<std::vector<float>> k(n_layers), v(n_layers);  // per layer [n1, d_model]
  model.embed(tokens.data(), positions.data(), n1, x.data());
  for (int l = 0; l < n_layers; ++l) {
    k[size_t(l)].resize(rows);
    v[size_t(l)].resize(rows);
    model.qkv(l, x.data(), n1, q.data(), k[size_t(l)].data(), v[size_t(l)].data());
    const KVCache& held = cache.layer(l);
    for (int r = 0; r < n1; ++r) {
      // What row r sees, gathered into a cache of its own: the held positions, then its
      // ancestors and itself in index order, which is their position order (a parent's
      // index is below its child's).
      KVCache seen;
      std::vector<float> key_row(d_model), value_row(d_model);
      for (int p = 0; p < length; ++p) {
        for (int h = 0; h < n_heads; ++h) {
          std::copy_n(held.key(h, p).data(), head_dim, key_row.data() + h * head_dim);
          std::copy_n(held.value(h, p).data(), head_dim, value_row.data() + h * head_dim);
        }
        seen.append(key_row, value_row);
      }
      for (int c = 0; c < n1; ++c)
        if (mask[size_t(r) * size_t(n1) + size_t(c)])
          seen.append(std::span<const float>(k[size_t(l)]).subspan(size_t(c) * d_model, d_model),
                      std::span<const float>(v[size_t(l)]).subspan(size_t(c) * d_model, d_model));
      attend_one(std::span<const float>(q).subspan(size_t(r) * d_model, d_model), seen,
                 std::span<float>(attn).subspan(size_t(r) * d_model, d_model));
    }
    model.finish_block(l, attn.data(), n1, x.data());
  }
  const size_t vocab = size_t(model.config().vocab);
  std::vector<float> logits(size_t(n1) * vocab);  // [n1, vocab]
  model.logits(x.data(), n1, logits.data());

  // The greedy walk down from the root.
  TreeVerdict verdict;
  std::vector<int> kept = {0};  // rows whose k and v stay: the root, then the path
  int current = 0;
  for (;;) {
    const std::span<const float> row(logits.data() + size_t(current) * vocab, vocab);
    verdict.logits.insert(verdict.logits.end(), row.begin(), row.end());
    const int next = greedy(row);
    verdict.tokens.push_back(next);
    int child = -1;
    for (int i = 0; i < n1 - 1 && child < 0; ++i)
      if (nodes[size_t(i)].parent + 1 == current && nodes[size_t(i)].token == next) child = i;
    if (child < 0) break;
    verdict.path.push_back(child);
    current = child + 1;
    kept.push_back(current);
  }
  // The compacted cache: the root's and the accepted nodes' rows, in path order.
  for (int l = 0; l < n_layers; ++l)
    for (int r : kept)
      cache.layer(l).append(
          std::span<const float>(k[size_t(l)]).subspan(size_t(r) * d_model, d_model),
          std::span<const float>(v[size_t(l)]).subspan(size_t(r) * d_model, d_model));
  return verdict;
}

}  // namespace course
