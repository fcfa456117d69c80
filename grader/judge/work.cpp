// The work a GPT-2 run did: rows through each layer's qkv and finish_block, and tokens
// through Model::forward, as the runner counted them (gpt2::WorkCounts). A cache is there
// so that each position goes through each layer once: the fixtures expect exactly the new
// positions per layer and no Model::forward. On a failure this says what was redone; on a
// pass, what the cache saved.
#include "judge/localize.hpp"

namespace course {

namespace {

std::vector<int64_t> int64s(const json& j) {
  std::vector<int64_t> v;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) v.push_back(x.get<int64_t>());
  return v;
}

std::vector<int> sizes_of(const json& lists) {
  std::vector<int> out;
  if (lists.is_array())
    for (const json& l : lists) out.push_back(l.is_array() ? int(l.size()) : 0);
  return out;
}

// Stage prefix-cache: the tokens of every prompt of the trace, and how many of them the
// reference found in the prefix cache (its "cached_tokens" per request).
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

// "9 tokens", "5 + 3 tokens", "6 prefix + 1 + 2 suffix tokens": the call's new positions.
std::string positions_story(const Fixture& fx) {
  auto joined = [](const std::vector<int>& v) {
    std::string s;
    for (int n : v) s += (s.empty() ? "" : " + ") + std::to_string(n);
    return s;
  };
  if (fx.adapter == "run_decode") return count_text(int64_t(fx.input.value("tokens", json::array()).size()), "token");
  if (fx.adapter == "run_prefill") return joined(sizes_of(fx.input.value("chunks", json()))) + " tokens";
  if (fx.adapter == "run_prefix_trace") {
    const int64_t cached = cached_prompt_tokens(fx);
    return std::to_string(prompt_tokens(fx)) + " prompt tokens, " + std::to_string(cached) +
           " of them served by the reference's prefix cache";
  }
  const int64_t n_new = fx.input.value("max_new_tokens", int64_t(0));
  const std::string fed = count_text(n_new - 1, "new token") + " fed back";
  if (fx.adapter == "run_generate")
    return count_text(int64_t(fx.input.value("prompt", json::array()).size()), "prompt token") + " + " + fed;
  const std::string suffixes = joined(sizes_of(fx.input.value("suffixes", json()))) + " suffix tokens";
  if (fx.adapter == "run_generate_from")
    return std::to_string(fx.input.value("prefix", json::array()).size()) + " prefix + " + suffixes + ", each + " + fed;
  return std::to_string(fx.input.value("prefix", json::array()).size()) + " prefix + " + suffixes;
}

// What the learner's own output says the call computed: `held` positions its caches
// gained (or, stage prefix-cache, prompt tokens its prefix cache did not serve), with how
// that figure is read from the output. held < 0: the output does not say.
struct Held {
  int64_t held = -1;
  std::string story;    // "one per position your cache holds (6)"
  bool several = false;  // the figure adds up several caches
  std::string noun = "the positions your cache holds";
};

// The common length of a list of shape rows, or -1.
int64_t uniform_length(const json& rows) {
  std::vector<int> lengths = shape_row_lengths(rows);
  if (lengths.empty()) return -1;
  for (int n : lengths)
    if (n != lengths.front()) return -1;
  return lengths.front();
}

Held learner_held(const Fixture& fx, const json& actual) {
  Held h;
  if (fx.adapter == "run_decode" || fx.adapter == "run_prefill" || fx.adapter == "run_generate") {
    // The call starts from a fresh cache: what it holds at the end is what it gained.
    const int64_t n = uniform_length(actual.value("cache_shapes", json()));
    if (n >= 0) {
      h.held = n;
      h.story = "one per position your cache holds (" + std::to_string(n) + ")";
    }
    return h;
  }
  if (fx.adapter == "run_prefix_trace") {
    const json requests = actual.value("requests", json());
    const std::vector<int> sizes = sizes_of(fx.input.value("prompts", json()));
    if (!requests.is_array() || requests.size() != sizes.size()) return h;
    int64_t served = 0;
    for (const json& r : requests) {
      if (!r.is_object() || !r.contains("cached_tokens") || !r["cached_tokens"].is_number_integer()) return h;
      served += r["cached_tokens"].get<int64_t>();
    }
    const int64_t total = prompt_tokens(fx);
    if (served < 0 || served > total) return h;
    h.noun = "the prompt tokens your prefix cache did not serve";
    h.held = total - served;
    h.story = std::string("one per prompt token") + " your prefix cache did not serve (" + std::to_string(total) + " - " +
                             std::to_string(served) + " your cache served = " + std::to_string(total - served) + ")";
    return h;
  }
  // run_prefix_reuse, run_generate_from: the saved prefix once, and each continuation's
  // positions after it.
  const int64_t prefix = int64_t(fx.input.value("prefix", json::array()).size());
  const json continued = actual.value("continued", json());
  if (!continued.is_array() || continued.empty()) return h;
  int64_t after = 0;
  std::string parts;
  for (const json& c : continued) {
    const int64_t n = c.is_object() ? uniform_length(c.value("cache_shapes", json())) : -1;
    if (n < prefix) return h;
    after += n - prefix;
    parts += (parts.empty() ? "" : " + ") + std::to_string(n - prefix);
  }
  h.held = prefix + after;
  h.story = "one per position your caches hold past the saved prefix, and the prefix's " + std::to_string(prefix) +
            " once (" + std::to_string(prefix) + " + " + parts + " = " + std::to_string(prefix + after) + ")";
  h.several = true;
  h.noun = "the positions your caches hold past the saved prefix, plus the prefix once";
  return h;
}

// One per-layer count (qkv or finish_block) against the expected one, read against what
// the learner's own output holds.
std::string rows_finding(const char* piece, const std::vector<int64_t>& e, const std::vector<int64_t>& a,
                         const std::string& story, const Held& held, bool prefix_trace) {
  if (a == e || e.empty()) return "";
  const int64_t want = e.front();
  bool uniform = a.size() == e.size();
  for (int64_t x : a) uniform = uniform && x == a.front();
  std::string s = std::string("Work: ") + piece;
  if (!uniform) {
    std::vector<int> shown(a.begin(), a.end());
    return s + " took " + list_text(shown) + " rows per layer; the call has " + std::to_string(want) + " new positions (" +
           story + "), each to go through every layer once.";
  }
  const int64_t got = a.front();
  s += " took " + count_text(got, "row") + " in every layer";
  const std::string call = "the call has " + count_text(want, "new position") + " (" + story + ")";
  if (held.held == got) {
    // The rows are what the learner's own state needs; the state is what differs.
    if (prefix_trace)
      return s + ", " + held.story + "; " + call + ": your prefix cache served " +
             count_text(want > got ? want - got : got - want, "token") + (want > got ? " more" : " fewer") + " than the reference's.";
    return s + ", " + held.story + "; " + call + ": your cache" + (held.several ? "s hold " : " holds ") +
           count_text(got > want ? got - want : want - got, "position") + (got > want ? " more" : " fewer") +
           " than expected, and the rows match what " + (held.several ? "they hold." : "it holds.");
  }
  if (held.held >= 0 && got > held.held) {
    const int64_t extra = got - held.held;
    return s + ", " + std::to_string(extra) + " more than " + held.noun + " (" + std::to_string(held.held) + "): " + count_text(extra, "row") + (extra == 1 ? " was" : " were") +
           " computed that your cache" + (held.several ? "s do" : " does") + " not keep (computed again, or thrown away)" +
           (held.held != want ? "; " + call : "") + ".";
  }
  if (held.held >= 0 && got < held.held) {
    const int64_t missing = held.held - got;
    return s + ", " + std::to_string(missing) + " fewer than " + held.noun + " (" + std::to_string(held.held) + "): " + count_text(missing, prefix_trace ? "token" : "position") +
           (missing == 1 ? " was" : " were") + " never put through the model in this call" +
           (held.held != want ? "; " + call : "") + ".";
  }
  const int64_t d = got > want ? got - want : want - got;
  return s + "; " + call + ", each to go through every layer once: " + count_text(d, "row") + (got > want ? " more" : " fewer") +
         " than that.";
}

}  // namespace

Lines work_findings(const Fixture& fx, const json& actual) {
  Lines out;
  if (!fx.expected.contains("work")) return out;
  const json& e = fx.expected["work"];
  const json a = actual.is_object() ? actual.value("work", json()) : json();
  if (!a.is_object()) return out;
  const std::string story = positions_story(fx);
  const Held held = learner_held(fx, actual);
  const bool trace = fx.adapter == "run_prefix_trace";
  const int64_t forward = a.value("forward_tokens", int64_t(0));
  if (forward > 0)
    out.push_back("Work: Model::forward ran on " + count_text(forward, "token") +
                  " during this call; it recomputes every position without the cache (its rows count below too).");
  const std::vector<int64_t> eq = int64s(e.value("qkv_rows", json())), aq = int64s(a.value("qkv_rows", json())),
                             ef = int64s(e.value("finish_block_rows", json())), af = int64s(a.value("finish_block_rows", json()));
  const bool same = eq == ef && aq == af;
  std::string q = rows_finding(same ? "qkv and finish_block each" : "qkv", eq, aq, story, held, trace);
  if (!q.empty()) out.push_back(q);
  if (!same) {
    std::string f = rows_finding("finish_block", ef, af, story, held, trace);
    if (!f.empty()) out.push_back(f);
  }
  return out;
}

std::string work_note(const Fixture& fx, const json& actual) {
  if (!fx.expected.contains("work") || !actual.is_object() || !actual.contains("work")) return "";
  const std::vector<int64_t> rows = int64s(fx.expected["work"].value("qkv_rows", json()));
  if (rows.empty()) return "";
  const int64_t n = rows.front();
  const std::string each = "each layer took " + count_text(n, "row");
  if (fx.adapter == "run_decode")
    return "work: " + each + ", one per token" +
           (n > 1 ? "; without a cache, step t would recompute all t + 1 positions: " + std::to_string(n * (n + 1) / 2) +
                        " rows per layer"
                  : "");
  if (fx.adapter == "run_prefill") {
    std::vector<int> sizes = sizes_of(fx.input.value("chunks", json()));
    int64_t before = 0, saved = 0;
    for (int s : sizes) {
      saved += before;
      before += s;
    }
    return "work: " + each + ", each position once" +
           (saved ? "; the later prefills attended to " + std::to_string(saved) + " cached positions instead of recomputing them" : "");
  }
  if (fx.adapter == "run_prefix_trace") {
    const int64_t cached = cached_prompt_tokens(fx);
    return "work: " + each + (cached ? "; " + std::to_string(cached) + " prompt positions per layer came from the prefix cache instead of being recomputed" : "");
  }
  if (fx.adapter == "run_generate") {
    // Without a cache, step i would recompute all prompt + i positions.
    const int64_t prompt = int64_t(fx.input.value("prompt", json::array()).size());
    const int64_t steps = fx.input.value("max_new_tokens", int64_t(1)) - 1;
    const int64_t recompute = prompt * (steps + 1) + steps * (steps + 1) / 2;
    return "work: " + each + ", one per position" +
           (steps > 0 ? "; recomputing the whole sequence at every step would take " + std::to_string(recompute) +
                            " rows per layer"
                      : "");
  }
  const int64_t prefix = int64_t(fx.input.value("prefix", json::array()).size());
  const int64_t k = int64_t(fx.input.value("suffixes", json::array()).size());
  return "work: " + each + ", the prefix once and then only the suffixes; " + std::to_string(k * prefix) +
         " prefix rows per layer were reused instead of recomputed";
}

}  // namespace course
