// Binding of stage prefix-cache's adapter: the prefix cache's traces on GPT-2.
//
// run_prefix_trace
//   input   {"weights", "n_blocks": N, "prompts": [[ids], ...]}
//   output  {"requests": [{"cached_tokens", "logits": [vocab]}],
//            "entries": [{"key": "16 hex digits", "block", "depth", "last_used"}],
//            "evicted": ["16 hex digits", ...], "ref_counts": [N], "free_blocks"}
#include <cstdio>
#include <string>

#include "course/adapters.hpp"
#include "course/batching.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course {

std::string key_hex(uint64_t key) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(key));
  return buf;
}

namespace stage_prefix_cache {

void register_adapters(AdapterTable& table) {
  table["run_prefix_trace"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = int_field(input, "n_blocks", 1, kMaxModelBlocks);
    const json& list = field(input, "prompts");
    if (!list.is_array() || list.empty() || list.size() > size_t(kMaxRequests))
      throw BadInput("\"prompts\" must be a list of 1 to " + std::to_string(kMaxRequests) + " prompts");
    std::vector<std::vector<int>> prompts;
    for (const json& p : list) prompts.push_back(tokens_field(json{{"prompt", p}}, "prompt", model, false));
    model.reset_work();
    PrefixRun run = run_prefix_trace(model, n_blocks, prompts);
    const gpt2::WorkCounts work = model.work();
    json requests = json::array();
    for (size_t i = 0; i < prompts.size(); ++i)
      requests.push_back({{"cached_tokens", i < run.cached_tokens.size() ? json(run.cached_tokens[i]) : json()},
                          {"logits", logits_json(i < run.logits.size() ? run.logits[i] : std::vector<float>{}, 1,
                                                 false)}});
    json entries = json::array();
    for (const CachedBlock& e : run.entries)
      entries.push_back({{"key", key_hex(e.key)}, {"block", e.block}, {"depth", e.depth}, {"last_used", e.last_used}});
    json evicted = json::array();
    for (BlockKey k : run.evicted) evicted.push_back(key_hex(k));
    return json{{"requests", requests},
                {"entries", entries},
                {"evicted", evicted},
                {"ref_counts", run.ref_counts},
                {"free_blocks", run.free_blocks},
                {"work", work_json(work)}};
  };
}

}  // namespace stage_prefix_cache

}  // namespace course
