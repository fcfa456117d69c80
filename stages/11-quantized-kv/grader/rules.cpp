// What the grader knows of stage quantized-kv's adapters beyond their input forms
// (judge/adapter_rules.hpp): the decode's localizer and its work, one row per token
// through every layer, as in stage one-token.
#include <cstring>
#include <optional>

#include "judge/localize.hpp"
#include "judge/work.hpp"
#include "wire/digest.hpp"

namespace course::stage_quantized_kv {

namespace {

const WorkRules kDecodeWork = {
    .positions_story = tokens_story,
    .learner_held = held_by_fresh_cache,
    .note = [](const Fixture&, int64_t n) { return each_layer_took(n) + ", one per token"; },
};

// A place in a decode's cache, ordered as the decode writes it: position, then layer.
struct Place {
  int64_t pos = 0, layer = 0;
  bool operator<(const Place& o) const { return pos != o.pos ? pos < o.pos : layer < o.layer; }
  bool operator==(const Place& o) const { return pos == o.pos && layer == o.layer; }
  std::string text() const { return "layer " + std::to_string(layer) + ", position " + std::to_string(pos); }
};

// One side's stored blocks (codes [12, seq, 768] and scales [12, seq, 24]): for each
// place, whether its codes and its scales are as expected. nullopt when the learner's
// tensors do not have the expected shapes (the comparison says so).
struct BlockCheck {
  int64_t layers = 0, seq = 0;
  std::vector<bool> codes_ok, scales_ok;  // [layers * seq], row l * seq + p
};
std::optional<BlockCheck> check_blocks(const json& e, const json& a, const std::string& side) {
  const std::optional<Digest> codes = digest_at(e, (side + "_codes").c_str());
  const std::optional<Tensor> e_scales = tensor_at(e, (side + "_scales").c_str());
  const std::optional<Tensor> a_codes = tensor_at(a, (side + "_codes").c_str());
  const std::optional<Tensor> a_scales = tensor_at(a, (side + "_scales").c_str());
  if (!codes || !e_scales || !a_codes || !a_scales || a_codes->shape != codes->shape ||
      a_scales->shape != e_scales->shape || codes->shape.size() != 3)
    return std::nullopt;
  BlockCheck c;
  c.layers = codes->shape[0];
  c.seq = codes->shape[1];
  c.codes_ok = rows_matching(*codes, *a_codes);
  const size_t blocks = size_t(e_scales->shape.back());
  for (size_t row = 0; row < size_t(c.layers * c.seq); ++row)
    c.scales_ok.push_back(std::memcmp(e_scales->data.data() + row * blocks,
                                      a_scales->data.data() + row * blocks, blocks * sizeof(float)) == 0);
  return c;
}

// The first place whose blocks differ, and what differs there ("codes", "scales").
std::optional<std::pair<Place, std::string>> first_wrong_block(const BlockCheck& c) {
  std::optional<std::pair<Place, std::string>> first;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t p = 0; p < c.seq; ++p) {
      const size_t row = size_t(l * c.seq + p);
      if (c.codes_ok[row] && c.scales_ok[row]) continue;
      const Place place{p, l};
      if (first && !(place < first->first)) continue;
      first = {place, !c.codes_ok[row] && !c.scales_ok[row] ? "codes and scales"
                      : !c.codes_ok[row]                    ? "codes"
                                                            : "scales"};
    }
  return first;
}

// The first place whose keys or values read back (the cache's [12, 12, seq, 64] rows)
// differ; nullopt when none does or they cannot be read.
std::optional<Place> first_wrong_read_back(const json& e, const json& a) {
  std::optional<Place> first;
  for (const char* name : {"keys", "values"}) {
    const std::optional<Digest> d = digest_at(e, name);
    const std::optional<Tensor> t = tensor_at(a, name);
    if (!d || !t || t->shape != d->shape || d->shape.size() != 4) return std::nullopt;
    const std::vector<bool> ok = rows_matching(*d, *t);
    const int64_t heads = d->shape[1], seq = d->shape[2];
    for (size_t row = 0; row < ok.size(); ++row) {
      if (ok[row]) continue;
      const Place place{int64_t(row) % seq, int64_t(row) / seq / heads};
      if (!first || place < *first) first = place;
    }
  }
  return first;
}

// A decode on a quantized cache: where the cache read back or the logits first go wrong
// (stage one-token's localizer, the attention being over the layer read back), then what
// the stored blocks say about it.
Lines localize_q8_decode(const Fixture& fx, const json& actual) {
  Lines out;
  RunPlan plan;
  plan.attention = "attend_one over the layer read back";
  const int n = int(ints_of(fx.input.value("tokens", json())).size());
  for (int p = 0; p < n; ++p) plan.chunks.push_back({p, p + 1, p, "step " + std::to_string(p)});
  if (!actual.is_object()) return out;
  const bool all_ok = localize_run(fx.expected, actual, "logits", plan, "", out);
  const std::optional<BlockCheck> keys = check_blocks(fx.expected, actual, "key");
  const std::optional<BlockCheck> values = check_blocks(fx.expected, actual, "value");
  if (!keys || !values) return out;
  const auto wrong_key = first_wrong_block(*keys), wrong_value = first_wrong_block(*values);
  const std::optional<Place> read_back = first_wrong_read_back(fx.expected, actual);
  // Read back wrong where every block is right: the blocks are not what is wrong there.
  if (read_back && !(wrong_key && !(read_back < wrong_key->first)) &&
      !(wrong_value && !(read_back < wrong_value->first))) {
    out.push_back("At " + read_back->text() +
                  " every stored block (codes and scales, keys and values) is as expected, yet "
                  "what is read back there is not those codes times those scales: "
                  "QuantizedKVCache::dequantized reads the blocks back wrong.");
    return out;
  }
  if (!wrong_key && !wrong_value) {
    if (!all_ok)
      out.push_back("Every stored block (codes and scales, keys and values) is as expected.");
    return out;
  }
  std::string blocks = "The stored blocks first differ";
  if (wrong_key) blocks += " in the keys at " + wrong_key->first.text() + " (" + wrong_key->second + ")";
  if (wrong_key && wrong_value) blocks += ", and";
  if (wrong_value) blocks += " in the values at " + wrong_value->first.text() + " (" + wrong_value->second + ")";
  out.push_back(blocks + ".");
  return out;
}

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_q8_blocks"},
      {.name = "run_q8_decode", .localize = localize_q8_decode, .work = &kDecodeWork},
  };
  return rules;
}

}  // namespace course::stage_quantized_kv
