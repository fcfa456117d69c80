#include "stages.hpp"

#include "decode_weights.hpp"

namespace course {

const std::vector<Stage>& stage_table() {
  static const std::vector<Stage> stages = {
      {1, "cache-structure", "One layer's KV cache", "01-cache-structure", true, diagnose_cache_structure, json::object()},
      {2, "multi-layer-cache", "A cache for every layer", "02-multi-layer-cache", true, diagnose_multi_layer_cache,
       json::object()},
      // The decode stages run GPT-2 small: the runner builds its weights once, in setup.
      {3, "one-token", "Decode one token", "03-one-token", true, diagnose_one_token,
       json{{"weights", decode_weights_spec()}}},
      {4, "prefill", "Prefill the prompt", "04-prefill", true, diagnose_prefill, json{{"weights", decode_weights_spec()}}},
      {5, "prefix-reuse", "Reuse a saved prefix", "05-prefix-reuse", true, diagnose_prefix_reuse,
       json{{"weights", decode_weights_spec()}}},
  };
  return stages;
}

const Stage* find_stage(const std::string& slug) {
  for (const auto& s : stage_table())
    if (s.slug == slug) return &s;
  return nullptr;
}

std::string stage_slugs() {
  std::string s;
  for (const auto& st : stage_table()) s += (s.empty() ? "" : ", ") + st.slug;
  return s;
}

}  // namespace course
