// The work a GPT-2 run did: rows through each layer's qkv and finish_block, and tokens
// through Model::forward, as the runner counted them (gpt2::WorkCounts). A cache is there
// so that each position goes through each layer once: the fixtures expect exactly the new
// positions per layer and no Model::forward. On a failure this says what was redone; on a
// pass, what the cache saved. How each adapter's positions are said and read is its stage's
// (judge/adapter_rules.hpp: WorkRules); the shared pieces are here (judge/work.hpp).
#include "judge/work.hpp"

namespace course {

namespace {

std::vector<int64_t> int64s(const json& j) {
  std::vector<int64_t> v;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) v.push_back(x.get<int64_t>());
  return v;
}

// The common length of a list of shape rows, or -1.
int64_t uniform_length(const json& rows) {
  std::vector<int> lengths = shape_row_lengths(rows);
  if (lengths.empty()) return -1;
  for (int n : lengths)
    if (n != lengths.front()) return -1;
  return lengths.front();
}

// One per-layer count (qkv or finish_block) against the expected one, read against what
// the learner's own output holds.
std::string rows_finding(const char* piece, const std::vector<int64_t>& e, const std::vector<int64_t>& a,
                         const std::string& story, const WorkHeld& held, bool prefix_trace) {
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

std::vector<int> sizes_of(const json& lists) {
  std::vector<int> out;
  if (lists.is_array())
    for (const json& l : lists) out.push_back(l.is_array() ? int(l.size()) : 0);
  return out;
}

std::string joined_sizes(const std::vector<int>& sizes) {
  std::string s;
  for (int n : sizes) s += (s.empty() ? "" : " + ") + std::to_string(n);
  return s;
}

std::string fed_back_story(const Fixture& fx) {
  const int64_t n_new = fx.input.value("max_new_tokens", int64_t(0));
  return count_text(n_new - 1, "new token") + " fed back";
}

std::string tokens_story(const Fixture& fx) {
  return count_text(int64_t(fx.input.value("tokens", json::array()).size()), "token");
}

std::string saved_prefix_story(const Fixture& fx) {
  return std::to_string(fx.input.value("prefix", json::array()).size()) + " prefix + " +
         joined_sizes(sizes_of(fx.input.value("suffixes", json()))) + " suffix tokens";
}

std::string each_layer_took(int64_t rows_per_layer) {
  return "work: each layer took " + count_text(rows_per_layer, "row");
}

WorkHeld held_by_fresh_cache(const Fixture&, const json& actual) {
  WorkHeld h;
  const int64_t n = uniform_length(actual.value("cache_shapes", json()));
  if (n >= 0) {
    h.held = n;
    h.story = "one per position your cache holds (" + std::to_string(n) + ")";
  }
  return h;
}

WorkHeld held_past_saved_prefix(const Fixture& fx, const json& actual) {
  WorkHeld h;
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

std::string saved_prefix_note(const Fixture& fx, int64_t rows_per_layer) {
  const int64_t prefix = int64_t(fx.input.value("prefix", json::array()).size());
  const int64_t k = int64_t(fx.input.value("suffixes", json::array()).size());
  return each_layer_took(rows_per_layer) + ", the prefix once and then only the suffixes; " +
         std::to_string(k * prefix) + " prefix rows per layer were reused instead of recomputed";
}

Lines work_findings(const Fixture& fx, const json& actual) {
  Lines out;
  const AdapterRules* rules = adapter_rules(fx.adapter);
  if (!rules || !rules->work || !fx.expected.contains("work")) return out;
  const json& e = fx.expected["work"];
  const json a = actual.is_object() ? actual.value("work", json()) : json();
  if (!a.is_object()) return out;
  const std::string story = rules->work->positions_story(fx);
  const WorkHeld held = rules->work->learner_held(fx, actual);
  const bool trace = rules->work->counts_unserved_tokens;
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
  const AdapterRules* rules = adapter_rules(fx.adapter);
  if (!rules || !rules->work) return "";
  if (!fx.expected.contains("work") || !actual.is_object() || !actual.contains("work")) return "";
  const std::vector<int64_t> rows = int64s(fx.expected["work"].value("qkv_rows", json()));
  if (rows.empty()) return "";
  return rules->work->note(fx, rows.front());
}

}  // namespace course
