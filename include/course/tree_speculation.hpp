// Stage 16 (tree-speculation): verify a whole tree of draft tokens in one batch, as Medusa
// and EAGLE do. Stage 6 checked one chain of drafts; a tree checks several guesses at each
// depth at once, and keeps the longest path the model agrees with.
//
// A draft tree hangs below the root: the token chosen last, not yet in the cache. Node i
// has a token and a parent: -1 for a child of the root, else the index of an earlier node.
// The rows of one verification are the root (row 0) and the nodes (row 1 + i), all in one
// batch through the model. A row's position is the cache's length plus its depth (the
// root's depth is 0, a node's is its parent's plus one), so siblings share a position.
// A row attends to the cache's positions and to its own ancestors in the tree, itself
// included, and to nothing else: the tree mask. Each row then computes exactly what it
// would if the root and the path down to it had been decoded one token at a time.
//
// Both your code (src/tree_speculation.cpp) and the reference implement this header; leave
// it as it is.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "course/decode.hpp"  // ModelCache, attend_one, greedy, gpt2::Model

namespace course {

struct DraftNode {
  int token = 0;
  int parent = -1;  // -1: a child of the root; else an earlier node's index
};

// The tree mask of the root and `nodes`: [n + 1, n + 1] bytes, row-major, rows and
// columns 0 = the root and 1 + i = node i. mask[r * (n + 1) + c] is 1 when row r may attend
// to row c, that is when c is r or one of r's ancestors (the root is an ancestor of every
// node), and 0 otherwise. Throws std::invalid_argument unless every node's parent is -1 or
// the index of an earlier node.
std::vector<uint8_t> tree_mask(std::span<const DraftNode> nodes);

// What one verification accepted.
struct TreeVerdict {
  std::vector<int> path;    // the accepted nodes' indices, the root's child first
  std::vector<int> tokens;  // [path.size() + 1]: the accepted nodes' tokens, then the next token
  std::vector<float>
      logits;  // [path.size() + 1, vocab]: the root's logits, then each accepted node's
};

// One verification of the tree below `root` on `cache`, which holds L = cache.layer(0).length()
// positions. One batch of n + 1 rows (root first, then the nodes in index order) through the
// model: embed at the rows' positions (L + depth), then per layer qkv, the tree-masked
// attention (row r over the cache's L positions, then its ancestors and itself in the
// tree, in position order), finish_block; the logits of every row.
//
// Greedy acceptance walks down from the root: the next token is greedy() of the current
// row's logits. If a child of the current row has that token (the lowest-index child when
// several do), that child is accepted and becomes the current row; otherwise the walk ends
// and that token is `tokens`' last, the next token to feed.
//
// Afterwards the cache holds L + 1 + path.size() positions: the root's rows, then the
// accepted nodes' rows in path order, exactly what decoding the root and the accepted
// tokens one at a time would have left; the rejected nodes leave nothing. `logits` and
// `tokens` are bit for bit those of that sequential decoding. With no nodes it is one
// decode step of the root. Throws std::invalid_argument for a bad parent or token id, and
// std::length_error when the deepest row's position would be 1024 or more, changing nothing.
TreeVerdict verify_tree(const gpt2::Model& model, ModelCache& cache, int root,
                        std::span<const DraftNode> nodes);

}  // namespace course
