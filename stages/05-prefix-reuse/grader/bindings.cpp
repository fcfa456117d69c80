// Binding of stage prefix-reuse's adapter (run_prefix_reuse): a prefix prefilled and saved,
// then each suffix on a clone of it. Output: the prefix's logits [vocab], the saved
// cache's shape rows after each continuation, the saved cache, and each continuation's
// cache and logits [vocab].
#include "runner/bindings.hpp"

#include "course/adapters.hpp"
#include "runner/weights.hpp"

namespace course::stage_prefix_reuse {

void register_adapters(AdapterTable& table) {
  table["run_prefix_reuse"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    std::vector<int> prefix = tokens_field(input, "prefix", model, false);
    std::vector<std::vector<int>> suffixes = token_lists(input, "suffixes", model);
    model.reset_work();
    ReuseRun run = run_prefix_reuse(model, prefix, suffixes);
    const gpt2::WorkCounts work = model.work();
    json out;
    out["prefix_logits"] = logits_json(run.saved.logits, 1, false);
    json saved_rows = json::array();
    for (const auto& rows : run.saved_rows) {
      json r = json::array();
      for (const ShapeRow& row : rows) r.push_back({row[0], row[1], row[2]});
      saved_rows.push_back(std::move(r));
    }
    out["saved_rows_after_each"] = saved_rows;
    out["saved"] = cache_json(run.saved.cache);
    json continued = json::array();
    for (size_t i = 0; i < run.continued.size(); ++i) {
      json c = cache_json(run.continued[i].cache);
      c["logits"] = logits_json(run.continued[i].logits, 1, false);
      continued.push_back(std::move(c));
    }
    out["continued"] = continued;
    out["work"] = work_json(work);
    return out;
  };
}

}  // namespace course::stage_prefix_reuse
