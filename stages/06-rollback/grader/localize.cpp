// Localization of speculative runs (run_speculative): the cache a run leaves holds the
// prompt and, per round, the accepted drafts and `next`; its rows are read in that order
// (localize_run), each position named by the round that put it there.
#include "judge/localize.hpp"

#include <algorithm>

namespace course {

Lines localize_speculative(const Fixture& fx, const json& actual) {
  Lines out;
  const int n_prompt = int(ints_of(fx.input.value("prompt", json())).size());
  const json& rounds = fx.input.value("rounds", json::array());
  if (!actual.is_object()) return {"The output is not an object."};
  RunPlan prompt;
  prompt.attention = "attend_causal";
  prompt.chunks = {{0, n_prompt, -1, "", "", "one of the prompt's positions (its prefill)"}};
  // A prompt cache that ends as long as the speculating one: the rounds went into it too.
  const json a_prompt = actual.value("prompt_cache", json());
  const std::vector<int> prompt_lengths =
      shape_row_lengths(a_prompt.is_object() ? a_prompt.value("cache_shapes", json()) : json());
  const json a_spec = actual.value("cache", json());
  const std::vector<int> spec_lengths =
      shape_row_lengths(a_spec.is_object() ? a_spec.value("cache_shapes", json()) : json());
  if (!prompt_lengths.empty() && prompt_lengths.front() != n_prompt &&
      prompt_lengths == spec_lengths)
    out.push_back("The prompt's cache ends with the speculating cache's lengths (" +
                  std::to_string(spec_lengths.front()) +
                  " positions in layer 0), where prefill left " + std::to_string(n_prompt) + ".");
  if (!localize_run(fx.expected.value("prompt_cache", json()), a_prompt, nullptr, prompt,
                    "The prompt's cache (prefill of the " + std::to_string(n_prompt) +
                        "-token prompt; speculation runs on a clone of it, so it must end as "
                        "prefill left it): ",
                    out))
    return out;
  // The speculating cache: the prompt, then per round its accepted drafts and `next`.
  RunPlan plan;
  plan.attention = "attend_one";
  plan.chunks = {{0, n_prompt, -1, "", "attend_causal",
                  "one of the prompt's positions (the prefill before the rounds)"}};
  int at = n_prompt, kept_if_no_crop = n_prompt;
  for (size_t r = 0; r < rounds.size(); ++r) {
    const std::vector<int> draft = ints_of(rounds[r].value("draft", json()));
    const int accepted = rounds[r].value("accepted", 0);
    const std::string round = "round " + std::to_string(r);
    for (int i = 0; i < accepted; ++i, ++at)
      plan.chunks.push_back({at, at + 1, -1, "", "",
                             round + "'s accepted draft token " + std::to_string(i) + " (" +
                                 std::to_string(draft[size_t(i)]) +
                                 "), decoded before the crop to " +
                                 std::to_string(at - i + accepted) + " kept it"});
    plan.chunks.push_back({at, at + 1, int(r), round + "'s next token", "",
                           round + "'s next token (" + std::to_string(rounds[r].value("next", 0)) +
                               "), decoded after the crop to " + std::to_string(at) + " (" +
                               std::to_string(accepted) + " of " + std::to_string(draft.size()) +
                               " drafts accepted)"});
    ++at;
    kept_if_no_crop += int(draft.size()) + 1;
  }
  const json a_cache = actual.value("cache", json());
  const std::vector<int> lengths =
      shape_row_lengths(a_cache.is_object() ? a_cache.value("cache_shapes", json()) : json());
  // The layers whose length differs, when they all hold the same wrong length: what that
  // length is in the rounds' terms.
  std::vector<int> wrong;
  for (size_t l = 0; l < lengths.size(); ++l)
    if (lengths[l] != at) wrong.push_back(int(l));
  const bool one_length = !wrong.empty() && std::all_of(wrong.begin(), wrong.end(), [&](int l) {
    return lengths[size_t(l)] == lengths[size_t(wrong.front())];
  });
  if (one_length) {
    const int got = lengths[size_t(wrong.front())];
    std::string s =
        "The speculating cache holds " + count_text(got, "position") +
        (wrong.size() == lengths.size() ? " in every layer" : " in layers " + index_list(wrong)) +
        "; the prompt (" + std::to_string(n_prompt) +
        ") and, per round, the accepted drafts and next make " + std::to_string(at);
    if (got == kept_if_no_crop)
      s += "; " + std::to_string(got) +
           " is what the rounds leave when no crop removes a draft (the prompt, every draft and "
           "every next)";
    else if (got - at == int(rounds.size()))
      s += ": one position more per round (" + std::to_string(rounds.size()) + ")";
    else if (at - got == int(rounds.size()))
      s += ": one position fewer per round (" + std::to_string(rounds.size()) + ")";
    out.push_back(s + ".");
  }
  localize_run(fx.expected.value("cache", json()), a_cache, "logits", plan,
               "The speculating cache: ", out);
  return out;
}

}  // namespace course
