// What the grader knows of stage prefix-cache's adapter beyond its input form
// (judge/adapter_rules.hpp): its localizer, and its work (one row per prompt token the
// prefix cache did not serve).
#include "judge/work.hpp"

namespace course::stage_prefix_cache {

namespace {

// The tokens of every prompt of the trace, and how many of them the reference found in
// the prefix cache (its "cached_tokens" per request).
int64_t prompt_tokens(const Fixture& fx) {
  int64_t n = 0;
  for (int s : sizes_of(fx.input.value("prompts", json()))) n += s;
  return n;
}

int64_t cached_prompt_tokens(const Fixture& fx) {
  int64_t n = 0;
  const json requests = fx.expected.value("requests", json::array());
  if (requests.is_array())
    for (const json& r : requests)
      if (r.is_object() && r.contains("cached_tokens") && r["cached_tokens"].is_number_integer())
        n += r["cached_tokens"].get<int64_t>();
  return n;
}

// The prompt tokens the learner's prefix cache did not serve, from its own "cached_tokens".
WorkHeld unserved_tokens(const Fixture& fx, const json& actual) {
  WorkHeld h;
  const json requests = actual.value("requests", json());
  const std::vector<int> sizes = sizes_of(fx.input.value("prompts", json()));
  if (!requests.is_array() || requests.size() != sizes.size()) return h;
  int64_t served = 0;
  for (const json& r : requests) {
    if (!r.is_object() || !r.contains("cached_tokens") || !r["cached_tokens"].is_number_integer())
      return h;
    served += r["cached_tokens"].get<int64_t>();
  }
  const int64_t total = prompt_tokens(fx);
  if (served < 0 || served > total) return h;
  h.noun = "the prompt tokens your prefix cache did not serve";
  h.held = total - served;
  h.story = "one per prompt token your prefix cache did not serve (" + std::to_string(total) +
            " - " + std::to_string(served) +
            " your cache served = " + std::to_string(total - served) + ")";
  return h;
}

const WorkRules kTraceWork = {
    .positions_story =
        [](const Fixture& fx) {
          return std::to_string(prompt_tokens(fx)) + " prompt tokens, " +
                 std::to_string(cached_prompt_tokens(fx)) +
                 " of them served by the reference's prefix cache";
        },
    .learner_held = unserved_tokens,
    .note =
        [](const Fixture& fx, int64_t n) {
          const int64_t cached = cached_prompt_tokens(fx);
          return each_layer_took(n) +
                 (cached ? "; " + std::to_string(cached) +
                               " prompt positions per layer came from the prefix cache instead "
                               "of being recomputed"
                         : "");
        },
    .counts_unserved_tokens = true,
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_prefix_trace", .localize = localize_prefix_trace, .work = &kTraceWork},
  };
  return rules;
}

}  // namespace course::stage_prefix_cache
