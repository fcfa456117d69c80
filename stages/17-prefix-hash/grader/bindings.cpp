// Binding of stage prefix-hash's adapter: prompts served through the learner's
// HashedPrefixCache (course/prefix_hash.hpp) on GPT-2, as stage 8's trace but without
// eviction, and with keys of `bits` bits. Like stages 9 and 13, it calls the learner's code
// directly: no adapter to write.
//
// run_prefix_hash
//   input   {"weights", "n_blocks": N, "bits": B, "prompts": [[ids], ...]}
//           Per prompt, in order: lookup, paged_prefill of the tokens not served (stage 7's,
//           yours), insert, release.
//   output  {"requests": [{"served": tokens served from the cache, "table": [blocks],
//                          "logits": [vocab] of the prompt's last token}],
//            "entries": [{"key": "16 hex digits", "block", "parent", "depth"}],
//            "lookup_collisions", "insert_collisions", "ref_counts": [N], "free_blocks",
//            "work": the rows through the model}
#include "runner/bindings.hpp"

#include <string>

#include "course/prefix_hash.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course::stage_prefix_hash {

void register_adapters(AdapterTable& table) {
  table["run_prefix_hash"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = int_field(input, "n_blocks", 1, kMaxModelBlocks);
    const int bits = int_field(input, "bits", 1, 64);
    const json& list = field(input, "prompts");
    if (!list.is_array() || list.empty() || list.size() > size_t(kMaxRequests))
      throw BadInput("\"prompts\" must be a list of 1 to " + std::to_string(kMaxRequests) +
                     " prompts");
    std::vector<std::vector<int>> prompts;
    for (const json& p : list)
      prompts.push_back(tokens_field(json{{"prompt", p}}, "prompt", model, false));
    model.reset_work();
    BlockPool pool(n_blocks, n_layers);
    HashedPrefixCache cache(pool, bits);
    json requests = json::array();
    for (const std::vector<int>& prompt : prompts) {
      PagedSequence sequence = cache.lookup(prompt);
      const int served = sequence.length();
      if (served < 0 || served >= int(prompt.size()))
        throw std::logic_error("lookup served " + std::to_string(served) + " of the prompt's " +
                               std::to_string(prompt.size()) +
                               " tokens: it must leave at least the last one");
      const std::vector<float> logits =
          paged_prefill(model, sequence, std::span<const int>(prompt).subspan(size_t(served)));
      json used = sequence.block_table();
      cache.insert(sequence, prompt);
      sequence.release();
      requests.push_back({{"served", served},
                          {"table", std::move(used)},
                          {"logits", logits_json(logits, 1, false)}});
    }
    json entries = json::array();
    for (const HashedBlock& e : cache.entries())
      entries.push_back(
          {{"key", key_hex(e.key)}, {"block", e.block}, {"parent", e.parent}, {"depth", e.depth}});
    std::vector<int> ref_counts;
    for (int b = 0; b < pool.n_blocks(); ++b) ref_counts.push_back(pool.ref_count(b));
    return json{{"requests", requests},
                {"entries", entries},
                {"lookup_collisions", cache.lookup_collisions()},
                {"insert_collisions", cache.insert_collisions()},
                {"ref_counts", ref_counts},
                {"free_blocks", pool.free_blocks()},
                {"work", work_json(model.work())}};
  };
}

}  // namespace course::stage_prefix_hash
