// Your tree verifier: stage 16 (tree-speculation).
//
// The declarations, with the exact contract of each function, are in
// include/course/tree_speculation.hpp; read it first. It builds on stages 3, 4 and 6: one
// batch of rows through the model as in a prefill, but a row's position is the cache's
// length plus its depth in the tree, and its attention sees the cache and its own
// ancestors only (the tree mask), each row with attend_one's numbers. The walk that accepts
// drafts is greedy; the cache then keeps the rows of the root and of the accepted path.
//
// Shapes: the mask is [n + 1, n + 1], row and column 0 the root, 1 + i node i; the batch's
// x, q, k, v and attention rows are [n + 1, d_model]; the logits [n + 1, vocab].
//
// Each function below throws "not implemented yet" until you replace its body.
#include "course/tree_speculation.hpp"

#include "course/not_implemented.hpp"

namespace course {

std::vector<uint8_t> tree_mask(std::span<const DraftNode> nodes) {
  // TODO: check the parents; row r sees column c when c is r or one of r's ancestors.
  (void)nodes;
  not_implemented("tree_mask (src/tree_speculation.cpp)");
}

TreeVerdict verify_tree(const gpt2::Model& model, ModelCache& cache, int root,
                        std::span<const DraftNode> nodes) {
  // TODO: one batch of the root and every node at their depths' positions, tree-masked
  // attention over the cache and the ancestors, the greedy walk from the root, and the
  // cache left holding the root and the accepted path.
  (void)model;
  (void)cache;
  (void)root;
  (void)nodes;
  not_implemented("verify_tree (src/tree_speculation.cpp)");
}

}  // namespace course
