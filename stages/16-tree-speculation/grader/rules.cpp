// What the grader knows of stage tree-speculation's adapters beyond their input forms
// (judge/adapter_rules.hpp): the mask probe's localizer names the first row whose visible
// columns differ, with the ancestors the rule gives it; the verification's walks the rounds
// in order (the root's logits, the accepted path, each accepted row's logits, the next
// token), then the cache at the end; its work is one row per root and draft node.
#include <algorithm>
#include <optional>

#include "judge/adapter_rules.hpp"
#include "judge/localize.hpp"
#include "judge/work.hpp"
#include "wire/digest.hpp"

namespace course::stage_tree_speculation {

namespace {

std::string row_name(size_t r) {
  return r == 0 ? "row 0 (the root)"
                : "row " + std::to_string(r) + " (node " + std::to_string(r - 1) + ")";
}

// The columns a mask row lets its row see.
std::vector<int> seen_columns(const json& row) {
  std::vector<int> out;
  if (!row.is_array()) return out;
  for (size_t c = 0; c < row.size(); ++c)
    if (row[c] == 1) out.push_back(int(c));
  return out;
}

Lines localize_tree_mask(const Fixture& fx, const json& actual) {
  const json em = fx.expected.value("mask", json::array());
  const json am = actual.is_object() ? actual.value("mask", json()) : json();
  if (!am.is_array() || am.size() != em.size()) {
    if (actual.is_object() && actual.contains("mask_bytes"))
      return {"Your tree_mask returned " + actual["mask_bytes"].dump() + " bytes; " +
              count_text(int64_t(em.size()) - 1, "node") + " and the root make a mask of " +
              std::to_string(em.size() * em.size()) + "."};
    return {};
  }
  for (size_t r = 0; r < em.size(); ++r) {
    if (em[r] == am[r]) continue;
    const std::vector<int> expected = seen_columns(em[r]);
    const std::string agree = r == 0   ? ""
                              : r == 1 ? "Row 0 agrees; "
                                       : "Rows 0 .. " + std::to_string(r - 1) + " agree; ";
    return {agree + row_name(r) + " sees columns " + index_list(seen_columns(am[r])) +
            ", expected " + index_list(expected) +
            ": itself and its ancestors, the root included, and nothing else."};
  }
  return {};
}

// The position of row `r` of a round (the cache's length before it plus its depth), from
// the input's parents; -1 when the input cannot say.
int depth_of(const json& nodes, size_t r) {
  int depth = 0;
  for (int at = int(r) - 1; at >= 0 && depth <= 64; ++depth) {
    if (size_t(at) >= nodes.size() || !nodes[size_t(at)].is_object()) return -1;
    at = nodes[size_t(at)].value("parent", -1);
  }
  return depth;
}

std::string round_findings(const Fixture& fx, size_t k, const json& e, const json& a) {
  const std::string round = "round " + std::to_string(k);
  const json nodes =
      fx.input.value("rounds", json::array()).size() > k ? fx.input["rounds"][k] : json::array();
  if (!a.is_object()) return round + " has no record.";
  const std::optional<Digest> el = digest_at(e, "logits");
  const std::optional<Tensor> al = tensor_at(a, "logits");
  const json ep = e.value("path", json::array()), ap = a.value("path", json());
  // Row j of the logits is the root's (j = 0) or the j-th accepted node's; compare the
  // rows both walks reached, in order, before the paths.
  std::vector<bool> ok;
  if (el && al && al->shape.size() == 2 && al->shape[1] == el->shape[1]) {
    Tensor head = *al;
    const int64_t rows = std::min(al->shape[0], el->shape[0]);
    head.shape[0] = rows;
    head.data.resize(size_t(rows * al->shape[1]));
    Digest top = *el;
    top.shape[0] = rows;
    top.rows.resize(size_t(rows));
    ok = rows_matching(top, head);
  }
  const auto wrong = std::find(ok.begin(), ok.end(), false);
  if (wrong != ok.end()) {
    const size_t j = size_t(wrong - ok.begin());
    if (j == 0)
      return round +
             ": the root's logits differ (row 0 of the batch: the cache and the root itself).";
    const int node = ep.is_array() && j - 1 < ep.size() ? ep[j - 1].get<int>() : -1;
    return round + ": the root's logits" +
           (j == 1 ? std::string()
                   : " and the first " + count_text(int64_t(j) - 1, "accepted row")) +
           " agree; the logits of accepted node " + std::to_string(node) + " (depth " +
           std::to_string(depth_of(nodes, size_t(node) + 1)) +
           ") differ: it sees the cache, its ancestors and itself, at the cache's length plus its "
           "depth.";
  }
  if (ep != ap)
    return round + ": the logits of the rows both walks reached agree, but the accepted path is " +
           (ap.is_array() ? ap.dump() : std::string("missing")) + ", expected " + ep.dump() +
           ": from the root, accept the lowest-index child whose token is greedy of the current "
           "row's logits.";
  if (e.value("tokens", json()) != a.value("tokens", json()))
    return round + ": the path agrees, but its tokens are " + a.value("tokens", json()).dump() +
           ", expected " + e.value("tokens", json()).dump() +
           ": the accepted nodes' tokens, then greedy of the last row's logits.";
  if (!ok.empty() && el && al && al->shape != el->shape)
    return round + "'s logits are " + shape_text(al->shape) + ", expected " +
           shape_text(el->shape) + ": one row for the root and one per accepted node.";
  return "";
}

Lines localize_tree_speculation(const Fixture& fx, const json& actual) {
  if (!actual.is_object()) return {"The output is not an object."};
  const json er = fx.expected.value("rounds", json::array());
  const json ar = actual.value("rounds", json());
  if (!ar.is_array() || ar.size() != er.size())
    return {"rounds: " + std::to_string(ar.is_array() ? ar.size() : 0) +
            " records, expected one per round (" + std::to_string(er.size()) + ")."};
  for (size_t k = 0; k < er.size(); ++k)
    if (std::string finding = round_findings(fx, k, er[k], ar[k]); !finding.empty()) {
      if (k > 0)
        finding =
            (k == 1 ? "Round 0 agrees; " : "Rounds 0 .. " + std::to_string(k - 1) + " agree; ") +
            finding;
      finding[0] = char(std::toupper(static_cast<unsigned char>(finding[0])));
      return {finding};
    }
  const json ec = fx.expected.value("cache", json()), ac = actual.value("cache", json());
  if (!ac.is_object()) return {"Every round agrees; the cache is missing."};
  if (ec.value("cache_shapes", json()) != ac.value("cache_shapes", json()))
    return {
        "Every round agrees; the cache's shape rows at the end differ: after each round it keeps "
        "the root's "
        "and the accepted nodes' positions and nothing of the rejected nodes."};
  for (const char* name : {"keys", "values"}) {
    const std::optional<Digest> ed = digest_at(ec, name);
    const std::optional<Tensor> ad = tensor_at(ac, name);
    if (!ed || !ad || ad->shape != ed->shape) continue;
    const std::vector<bool> ok = rows_matching(*ed, *ad);
    const auto wrong = std::find(ok.begin(), ok.end(), false);
    if (wrong == ok.end() || ed->shape.size() != 4) continue;
    const int64_t row = wrong - ok.begin(), seq = ed->shape[2];
    return {"Every round agrees and the cache holds as many positions as expected, but its " +
            std::string(name) + " first differ at layer " + std::to_string(row / (12 * seq)) +
            ", head " + std::to_string(row / seq % 12) + ", position " + std::to_string(row % seq) +
            ": each round's rows go in as the root, then the accepted path, in path order."};
  }
  return {};
}

int64_t rows_of(const Fixture& fx) {
  int64_t n = 0;
  for (const json& round : fx.input.value("rounds", json::array())) n += 1 + int64_t(round.size());
  return n;
}

const WorkRules kTreeWork = {
    .positions_story =
        [](const Fixture& fx) {
          return count_text(rows_of(fx), "row") +
                 " (each round's root and every draft node, accepted or not)";
        },
    // The rows through the model are the draft trees', not the positions the cache keeps.
    .learner_held = [](const Fixture&, const json&) { return WorkHeld{}; },
    .note =
        [](const Fixture&, int64_t n) {
          return each_layer_took(n) + ": one per root and draft node, each round in one batch";
        },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_tree_mask", .localize = localize_tree_mask},
      {.name = "run_tree_speculation", .localize = localize_tree_speculation, .work = &kTreeWork},
  };
  return rules;
}

}  // namespace course::stage_tree_speculation
