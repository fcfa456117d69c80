// Localization of greedy generation (run_generate, run_generate_from, and stage speed's
// run_speed, a generation after a made-up past): the loop's runs are
// read as GPT-2 runs (localize_run: prefill of the prompt, then one decode step per token
// fed back), after the generated tokens themselves.
#include "judge/localize.hpp"

namespace course {

// ---- Greedy generation ---------------------------------------------------------------------

namespace {

// A generation from `past` cached positions: the prompt's n_prompt positions at once (its
// last row's logits choose token 0), then one position per decode step (step i's logits
// choose token i). The step that would feed the last token back never runs.
RunPlan generation_plan(int past, int n_prompt, int n_new) {
  RunPlan plan;
  plan.attention = "attention";
  if (past > 0) plan.chunks.push_back({0, past, -1, ""});
  const int end = past + n_prompt;
  plan.chunks.push_back({past, end, 0, "the prompt's prefill (token 0's logits)"});
  for (int i = 1; i < n_new; ++i)
    plan.chunks.push_back(
        {end + i - 1, end + i, i,
         "decode step " + std::to_string(i) + " (token " + std::to_string(i) + "'s logits)"});
  return plan;
}

// The first token that differs from the expected ones, or a count that differs; "" when
// they are equal.
std::string tokens_finding(const json& e, const json& a, const std::string& who, const char* what) {
  const std::vector<int> et = ints_of(e), at = ints_of(a);
  if (a.is_array() && at.size() == a.size() && at == et) return "";
  if (!a.is_array() || at.size() != a.size() || at.size() != et.size())
    return who + what + ": " + count_text(int64_t(et.size()), "token") + " expected, got " +
           short_json(a, 80) + ".";
  size_t i = 0;
  while (at[i] == et[i]) ++i;
  const std::string right = i == 0   ? ""
                            : i == 1 ? " (token 0 is right)"
                                     : " (tokens 0 .. " + std::to_string(i - 1) + " are right)";
  return who + what + ": token " + std::to_string(i) + " is the first wrong one, " +
         std::to_string(at[i]) + " where greedy chooses " + std::to_string(et[i]) + right + ".";
}

// One generation's tokens, cache and logits. True when all is right.
bool localize_generated(const json& e, const json& a, const RunPlan& plan, const std::string& who,
                        Lines& out) {
  std::string t = tokens_finding(e.value("tokens", json()),
                                 a.is_object() ? a.value("tokens", json()) : json(), who, "tokens");
  if (!t.empty()) out.push_back(t);
  return localize_run(e, a, "logits", plan, who, out) && t.empty();
}

}  // namespace

Lines localize_generation(const Fixture& fx, const json& actual) {
  Lines out;
  const int n_new = fx.input.value("max_new_tokens", 0);
  if (fx.adapter == "run_generate") {
    const int n_prompt = int(ints_of(fx.input.value("prompt", json())).size());
    localize_generated(fx.expected, actual, generation_plan(0, n_prompt, n_new), "", out);
    // What on_token saw, when it is not what was returned (wrong tokens are said above).
    const json streamed = actual.is_object() ? actual.value("streamed", json()) : json();
    const json tokens = actual.is_object() ? actual.value("tokens", json()) : json();
    if (fx.expected.contains("streamed") && streamed != tokens) {
      std::string s = tokens_finding(fx.expected["streamed"], streamed, "", "on_token");
      if (!s.empty())
        out.push_back(s + " It must be called once with each token, as it is chosen.");
    }
    return out;
  }
  if (fx.adapter == "run_speed") {  // stage speed: a generation after a made-up past
    const int n_prompt = int(ints_of(fx.input.value("prompt", json())).size());
    const int64_t past = fx.input.value("past", int64_t(0));
    if (!localize_generated(fx.expected, actual, generation_plan(0, n_prompt, n_new), "", out))
      out.push_back("Positions here count from the end of the made-up past: position 0 is the "
                    "prompt's first token, at position " + std::to_string(past) +
                    " of the cache (the output holds only the positions after the past).");
    return out;
  }
  // run_generate_from: each continuation (the prefix, its suffix, its steps), then the
  // saved cache at the end.
  const int n_prefix = int(ints_of(fx.input.value("prefix", json())).size());
  const json& suffixes = fx.input.value("suffixes", json::array());
  const json& e_cont = fx.expected.value("continued", json::array());
  const json a_cont = actual.is_object() ? actual.value("continued", json()) : json();
  if (!same_count_of_continuations(e_cont, a_cont, out)) return out;
  for (size_t i = 0; i < e_cont.size() && i < suffixes.size(); ++i) {
    const int n = int(ints_of(suffixes[i]).size());
    const std::string who = "Continuation " + std::to_string(i) + " (" + std::to_string(n_prefix) +
                            " prefix + " + std::to_string(n) +
                            " suffix positions, then its steps): ";
    if (!localize_generated(e_cont[i], a_cont[i], generation_plan(n_prefix, n, n_new), who, out))
      return out;
  }
  RunPlan saved;
  saved.attention = "attention";
  saved.chunks = {{0, n_prefix, -1, ""}};
  localize_run(fx.expected.value("saved", json()), actual.value("saved", json()), nullptr, saved,
               "The saved cache at the end (save_prefix of the " + std::to_string(n_prefix) +
                   "-token prefix must leave " + count_text(n_prefix, "position") +
                   ", and no continuation may change them): ",
               out);
  return out;
}

}  // namespace course
