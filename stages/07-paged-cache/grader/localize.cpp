// Localization for the plans and servers of stages rollback (speculative runs),
// paged-cache, prefix-cache and continuous-batching.
//
//  * Speculation: the cache a run leaves holds the prompt and, per round, the accepted
//    drafts and `next`; its rows are read in that order (localize_run), each position
//    named by the round that put it there.
//  * Paged plans and forks: the judge replays the plan with the reference's rules (the
//    lowest free block, copy-on-write of a shared, partly filled last block, all or
//    nothing) and records which step last set each length, table entry and reference
//    count. The earliest step whose result the learner's final state does not show is
//    named with what that step does; lengths, tables and counts come before keys. When the
//    replay does not give the fixture's expected state, no step is named. A failed plan is
//    also run again on its first steps (grade.cpp, locate_paged_plan_divergence): the step
//    after which the learner's own runs depart from the rules, which the final state alone
//    cannot tell (a step that should have changed nothing may have changed what an earlier
//    one set).
//  * Prefix-cache traces: the first request whose served tokens or logits differ, the
//    first eviction that differs, and what each key is (which prompt's block).
//  * The server loop: the schedule replayed with the admission rule of batching.hpp; the
//    first step whose admitted, decoded or free-block figure differs, with the rule that
//    decides it; then the first request, token and batch row whose logits differ.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "judge/localize.hpp"
#include "wire/shape.hpp"

namespace course {

namespace {

// A paged block's positions (include/course/paged.hpp's block_size, written again here so
// that the judge does not read the learner's tree); the model's shape from wire/shape.hpp.
constexpr int kBlock = 16;
constexpr int kDModel = shape::kDModel, kHeads = shape::kHeads, kDim = shape::kHeadDim;

// A list of whole numbers exactly (every entry one), or nullopt.
std::optional<std::vector<int>> int_list(const json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<int> v = ints_of(j);
  if (v.size() != j.size()) return std::nullopt;
  return v;
}

int blocks_for(int n) { return (n + kBlock - 1) / kBlock; }

// ---- the pool, replayed with the reference's rules -------------------------------------

struct PoolReplay {
  struct Seq {
    int length = 0;
    std::vector<int> table;
    int length_step = -1, table_step = -1;  // the steps that last set them
    std::vector<int> entry_step;            // per table entry
    std::vector<int> writer;                // per position: the append id written there
    std::vector<int> write_step;            // per position: the step that wrote it
  };
  std::vector<int> counts, count_step;
  std::vector<Seq> seqs;
  std::vector<std::string> what;  // per step: what it does under the reference's rules
  std::vector<int> exhausted;
  bool valid = true;  // false when the plan names something that does not exist

  explicit PoolReplay(int n_blocks)
      : counts(size_t(std::max(0, n_blocks)), 0), count_step(counts.size(), -1) {}

  int free_blocks() const { return int(std::count(counts.begin(), counts.end(), 0)); }
  int allocate(int step) {
    for (size_t b = 0; b < counts.size(); ++b)
      if (counts[b] == 0) {
        counts[b] = 1;
        count_step[b] = step;
        return int(b);
      }
    return -1;
  }
  Seq* seq(int i) {
    if (i < 0 || size_t(i) >= seqs.size()) {
      valid = false;
      return nullptr;
    }
    return &seqs[size_t(i)];
  }
  void create(int step) {
    seqs.emplace_back();
    seqs.back().length_step = seqs.back().table_step = step;
    what.push_back("creates sequence " + std::to_string(seqs.size() - 1) + ", empty");
  }
  // grow(n) of sequence i; `writer` is the append id of the first new position, the others
  // following in order (-1: none).
  void grow(int step, int i, int n, int writer, const std::string& doing) {
    Seq* s = seq(i);
    if (!s) return what.push_back(doing + ": no such sequence");
    const int used = s->length % kBlock;
    const bool copy_last = used != 0 && counts[size_t(s->table.back())] > 1 && n > 0;
    const int fresh = blocks_for(s->length + n) - int(s->table.size());
    const int needed = fresh + (copy_last ? 1 : 0);
    std::string text =
        doing + " at position" + (n == 1 ? " " : "s ") + range_text(s->length, s->length + n - 1);
    if (needed > free_blocks()) {
      exhausted.push_back(step);
      return what.push_back(text + ": it needs " + count_text(needed, "free block") +
                            ", the pool has " + std::to_string(free_blocks()) +
                            ", so it throws PoolExhausted and changes nothing");
    }
    std::vector<std::string> parts;
    if (copy_last) {
      const int shared = s->table.back(), own = allocate(step);
      --counts[size_t(shared)];
      count_step[size_t(shared)] = step;
      s->table.back() = own;
      s->entry_step.back() = step;
      parts.push_back("its last block " + std::to_string(shared) + " is partly filled (" +
                      std::to_string(used) + " of 16) and shared, so it is copied into block " +
                      std::to_string(own) + " (copy-on-write; block " + std::to_string(shared) +
                      "'s count goes down to " + std::to_string(counts[size_t(shared)]) + ")");
    }
    std::vector<int> taken;
    for (int k = 0; k < fresh; ++k) {
      taken.push_back(allocate(step));
      s->table.push_back(taken.back());
      s->entry_step.push_back(step);
    }
    if (!taken.empty()) {
      s->table_step = step;
      parts.push_back(
          std::string(taken.size() == 1 ? "it takes block " : "it takes blocks ") +
          index_list(taken) +
          (s->length % kBlock == 0 && s->length > 0 ? " (its last block is full)" : ""));
    }
    if (parts.empty())
      parts.push_back("it writes into block " + std::to_string(s->table.back()) + ", offset " +
                      std::to_string(s->length % kBlock));
    for (int k = 0; k < n; ++k) {
      s->writer.push_back(writer < 0 ? -1 : writer + k);
      s->write_step.push_back(step);
    }
    s->length += n;
    s->length_step = step;
    for (size_t k = 0; k < parts.size(); ++k) text += (k ? "; " : ": ") + parts[k];
    what.push_back(text);
  }
  void fork(int step, int i, const std::string& name) {
    Seq* s = seq(i);
    if (!s) return what.push_back("forks a sequence that does not exist");
    Seq copy = *s;
    copy.length_step = copy.table_step = step;
    for (int& e : copy.entry_step) e = step;
    for (int b : copy.table) {
      ++counts[size_t(b)];
      count_step[size_t(b)] = step;
    }
    const std::vector<int> shared = s->table;
    seqs.push_back(std::move(copy));  // s is not used after this: the vector may have moved
    what.push_back("forks sequence " + std::to_string(i) + " into " + name + ": it shares " +
                   (shared.empty() ? std::string("no block") : "blocks " + index_list(shared)) +
                   (shared.empty() ? "" : ", each count up by one"));
  }
  void release(int step, int i) {
    Seq* s = seq(i);
    if (!s) return what.push_back("releases a sequence that does not exist");
    std::vector<int> freed;
    for (int b : s->table) {
      if (counts[size_t(b)] > 0) --counts[size_t(b)];
      count_step[size_t(b)] = step;
      if (counts[size_t(b)] == 0) freed.push_back(b);
    }
    what.push_back("releases sequence " + std::to_string(i) + ": " +
                   (s->table.empty()
                        ? std::string("it holds no block")
                        : "blocks " + index_list(s->table) + " each count down by one" +
                              (freed.empty() ? ", none free"
                                             : (freed.size() == 1 ? ", block " : ", blocks ") +
                                                   index_list(freed) + " now free")));
    *s = Seq{};
    s->length_step = s->table_step = step;
  }
};

// One difference between the learner's final pool and the replay's: the step that last set
// it, and a sentence on it.
struct Difference {
  int step = -1;
  std::string text;
};

// Lengths, tables, counts and the exhausted steps of `a` against the replay (names:
// "sequence" or "branch", with `offset` sequences of the replay not in the output).
std::vector<Difference> structure_differences(const PoolReplay& r, const json& a_seqs,
                                              const json& a_counts, const json& a_exhausted,
                                              size_t offset, const std::string& noun, Lines& out) {
  std::vector<Difference> d;
  if (!a_seqs.is_array() || a_seqs.size() + offset != r.seqs.size()) {
    out.push_back("The output has " +
                  (a_seqs.is_array() ? count_text(int64_t(a_seqs.size()), noun)
                                     : "no list of " + noun + "s") +
                  "; " + std::to_string(r.seqs.size() - offset) +
                  (r.seqs.size() - offset == 1 ? " is" : " are") +
                  " expected. Nothing more is read from them.");
    return {};
  }
  for (size_t i = 0; i < a_seqs.size(); ++i) {
    const PoolReplay::Seq& e = r.seqs[i + offset];
    const json& a = a_seqs[i];
    const std::string who = noun + " " + std::to_string(i);
    const json len = a.is_object() ? a.value("length", json()) : json();
    if (!len.is_number_integer() || len.get<int>() != e.length)
      d.push_back({e.length_step, who + "'s length() is " + short_json(len, 20) + " (expected " +
                                      std::to_string(e.length) + ")"});
    const std::optional<std::vector<int>> table =
        int_list(a.is_object() ? a.value("block_table", json()) : json());
    if (!table) {
      d.push_back({e.table_step, who + "'s block table is not a list of block ids"});
    } else if (*table != e.table) {
      int step = e.table_step;
      for (size_t k = 0; k < std::min(table->size(), e.table.size()); ++k)
        if ((*table)[k] != e.table[k]) {
          step = e.entry_step[k];
          break;
        }
      d.push_back({step, who + "'s block table is " + list_text(*table) + " (expected " +
                             list_text(e.table) + ")"});
    }
  }
  const std::optional<std::vector<int>> counts = int_list(a_counts);
  if (!counts || counts->size() != r.counts.size()) {
    d.push_back({-1, "the pool's reference counts are " + short_json(a_counts, 60) +
                         ", one per block expected (" + std::to_string(r.counts.size()) + ")"});
  } else {
    for (size_t b = 0; b < r.counts.size(); ++b)
      if ((*counts)[b] != r.counts[b])
        d.push_back({r.count_step[b], "block " + std::to_string(b) + "'s count is " +
                                          std::to_string((*counts)[b]) + " (expected " +
                                          std::to_string(r.counts[b]) + ")"});
  }
  if (!a_exhausted.is_null()) {
    const std::optional<std::vector<int>> ex = int_list(a_exhausted);
    if (!ex) {
      d.push_back({-1, "exhausted is not a list of step numbers"});
    } else {
      for (int s : r.exhausted)
        if (std::find(ex->begin(), ex->end(), s) == ex->end())
          d.push_back({s, "step " + std::to_string(s) +
                              " is not among the steps your plan reports as PoolExhausted"});
      for (int s : *ex)
        if (std::find(r.exhausted.begin(), r.exhausted.end(), s) == r.exhausted.end())
          d.push_back({s, "step " + std::to_string(s) + " threw PoolExhausted in your run"});
    }
  }
  return d;
}

// The earliest step among `d` (those without a step last), said with what it does.
void say_earliest(const std::vector<Difference>& d, const PoolReplay& r, const std::string& unit,
                  Lines& out) {
  int first = -1;
  for (const Difference& x : d)
    if (x.step >= 0 && (first < 0 || x.step < first)) first = x.step;
  std::string here, later_text;
  std::vector<int> later;
  for (const Difference& x : d) {
    if (x.step == first) here += (here.empty() ? "" : "; ") + x.text;
    if (x.step != first && x.step >= 0 &&
        std::find(later.begin(), later.end(), x.step) == later.end())
      later.push_back(x.step);
  }
  std::sort(later.begin(), later.end());
  if (first < 0) {
    out.push_back("At the end: " + here + ".");
    return;
  }
  out.push_back("The earliest " + unit + " whose result your final state does not show is " + unit +
                " " + std::to_string(first) + ", which " + r.what[size_t(first)] +
                ". At the end: " + here + ".");
  for (const Difference& x : d)
    if (x.step < 0) out.push_back("Also at the end: " + x.text + ".");
  if (!later.empty())
    out.push_back("Later " + unit + "s whose results differ too: " + index_list(later) + ".");
}

// Stage 7's appended values say where they came from, as stage 1's do: append #a's key
// holds a*768 + h*64 + d + 1 at head h, dim d, and its value minus that.
std::string value_origin(float x, int n_appends) {
  if (!std::isfinite(x) || x != std::floor(x) || x == 0.0f) return "a value no append wrote";
  const double m = std::fabs(double(x)) - 1;
  if (m < 0 || m >= double(n_appends) * kDModel) return "a value no append wrote";
  const int i = int(m);
  return "append #" + std::to_string(i / kDModel) + "'s " + (x > 0 ? "key" : "value") + ", head " +
         std::to_string((i % kDModel) / kDim) + ", dim " + std::to_string(i % kDim);
}

}  // namespace

// ---- stage rollback: speculative runs ----------------------------------------------------

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

// ---- stage paged-cache: plans ---------------------------------------------------------------

namespace {

// The plan's first `steps` steps replayed with the reference's rules; `appends` is then the
// number of positions they append (the next append id).
PoolReplay replay_plan(const Fixture& fx, size_t steps, int& appends) {
  const json& plan = fx.input.value("plan", json::array());
  PoolReplay r(fx.input.value("n_blocks", 0));
  appends = 0;
  for (size_t step = 0; step < plan.size() && step < steps; ++step) {
    const std::string op = plan[step].value("op", "");
    const int i = plan[step].value("sequence", -1);
    if (op == "create")
      r.create(int(step));
    else if (op == "append") {
      const json n_field = plan[step].value("n", json(1));
      const int n = n_field.is_number_integer() ? n_field.get<int>() : 0;
      if (n < 1) r.valid = false;
      r.grow(int(step), i, std::max(n, 1), appends,
             n == 1 ? "appends #" + std::to_string(appends) + " to sequence " + std::to_string(i)
                    : "appends #" + std::to_string(appends) + " .. #" +
                          std::to_string(appends + n - 1) + " to sequence " + std::to_string(i) +
                          " (one grow(" + std::to_string(n) + "))");
      appends += std::max(n, 1);
    } else if (op == "fork")
      r.fork(int(step), i, "sequence " + std::to_string(r.seqs.size()));
    else if (op == "release")
      r.release(int(step), i);
    else
      r.valid = false, r.what.push_back("does what the judge cannot replay");
  }
  return r;
}

// Whether the replay gives the fixture's expected state (lengths, tables, counts, exhausted
// steps): only then may a step be named.
bool replay_gives_expected(const Fixture& fx, const PoolReplay& r) {
  const json& e = fx.expected;
  Lines none;
  return r.valid &&
         structure_differences(r, e.value("sequences", json()), e.value("ref_counts", json()),
                               e.value("exhausted", json()), 0, "sequence", none)
             .empty() &&
         none.empty();
}

}  // namespace

Lines localize_paged_plan(const Fixture& fx, const json& actual) {
  Lines out;
  int appends = 0;
  const PoolReplay r = replay_plan(fx, SIZE_MAX, appends);
  // The replay must give the fixture's expected state; otherwise no step is named.
  const json& e = fx.expected;
  if (!replay_gives_expected(fx, r)) return out;
  if (!actual.is_object()) return {"The output is not an object."};
  std::vector<Difference> d = structure_differences(
      r, actual.value("sequences", json()), actual.value("ref_counts", json()),
      actual.value("exhausted", json()), 0, "sequence", out);
  if (!out.empty()) return out;
  if (!d.empty()) {
    say_earliest(d, r, "step", out);
    return out;
  }
  if (actual.value("free_blocks", json()) != e.value("free_blocks", json()))
    out.push_back("Every length, table and count is right, and " + std::to_string(r.free_blocks()) +
                  " blocks have count 0; free_blocks() says " +
                  short_json(actual.value("free_blocks", json()), 20) + ".");
  // The keys and values, in the order of the steps that wrote them.
  struct Wrong {
    int step = -1, seq = 0, pos = 0, head = 0, dim = 0;
    bool key = true;
    float got = 0;
  };
  Wrong first;
  int bad = 0;
  for (size_t i = 0; i < r.seqs.size(); ++i) {
    const PoolReplay::Seq& s = r.seqs[i];
    for (int kv = 0; kv < 2; ++kv) {
      const char* name = kv ? "values" : "keys";
      std::optional<Tensor> et = tensor_at(e["sequences"][i], name),
                            at = tensor_at(actual["sequences"][i], name);
      if (!et) continue;
      if (!at || at->shape != et->shape) {
        out.push_back("sequence " + std::to_string(i) + "'s " + name + " are " +
                      (at ? shape_text(at->shape) : std::string("missing")) + ", expected " +
                      shape_text(et->shape) + ".");
        return out;
      }
      for (int h = 0; h < kHeads; ++h)
        for (int p = 0; p < s.length; ++p)
          for (int dd = 0; dd < kDim; ++dd) {
            const size_t k = (size_t(h) * size_t(s.length) + size_t(p)) * kDim + size_t(dd);
            if (at->data[k] == et->data[k]) continue;
            ++bad;
            const int step = s.write_step[size_t(p)];
            if (first.step < 0 || step < first.step || (step == first.step && int(i) < first.seq))
              first = {step, int(i), p, h, dd, kv == 0, at->data[k]};
            break;
          }
    }
  }
  if (first.step < 0) return out;
  const PoolReplay::Seq& s = r.seqs[size_t(first.seq)];
  out.push_back(
      "Every length, table and count is right. The earliest step whose keys or values your final "
      "state does not "
      "show is step " +
      std::to_string(first.step) + ", which " + r.what[size_t(first.step)] + ". Sequence " +
      std::to_string(first.seq) + "'s " + (first.key ? "key" : "value") + " at position " +
      std::to_string(first.pos) + " (block " + std::to_string(s.table[size_t(first.pos / kBlock)]) +
      ", offset " + std::to_string(first.pos % kBlock) + "), head " + std::to_string(first.head) +
      ", dim " + std::to_string(first.dim) + " holds " + format_float(first.got, first.got) + ": " +
      value_origin(first.got, appends) + ", where append #" +
      std::to_string(s.writer[size_t(first.pos)]) + "'s belongs.");
  return out;
}

// ---- stage paged-cache: plans run again, cut short ----------------------------------------

Lines locate_paged_plan_divergence(const Fixture& fx, const json& actual, const PlanRunner& run) {
  const json& plan = fx.input.value("plan", json::array());
  if (!plan.is_array() || plan.size() < 2 || !actual.is_object()) return {};
  int appends = 0;
  if (!replay_gives_expected(fx, replay_plan(fx, SIZE_MAX, appends))) return {};
  // Every append's rows, by append id, from the input: what each position must hold.
  std::vector<const float*> key_row, value_row;
  std::vector<Tensor> rows;
  rows.reserve(2 * plan.size());
  for (const json& step : plan) {
    if (step.value("op", "") != "append") continue;
    const std::optional<Tensor> k = tensor_at(step, "k"), v = tensor_at(step, "v");
    const json n_field = step.value("n", json(1));
    const int n = n_field.is_number_integer() ? n_field.get<int>() : 0;
    if (!k || !v || n < 1 || k->data.size() != size_t(n) * kDModel ||
        v->data.size() != k->data.size())
      return {};
    rows.push_back(*k);
    rows.push_back(*v);
    for (int i = 0; i < n; ++i) {
      key_row.push_back(rows[rows.size() - 2].data.data() + size_t(i) * kDModel);
      value_row.push_back(rows.back().data.data() + size_t(i) * kDModel);
    }
  }
  // Whether `out` is the state the rules give after the first `steps` steps: every length,
  // table, count, free-block figure and exhausted step, and every row.
  auto holds = [&](size_t steps, const json& out) {
    int n = 0;
    const PoolReplay r = replay_plan(fx, steps, n);
    Lines said;
    if (!out.is_object() || !r.valid ||
        !structure_differences(r, out.value("sequences", json()), out.value("ref_counts", json()),
                               out.value("exhausted", json::array()), 0, "sequence", said)
             .empty() ||
        !said.empty() || out.value("free_blocks", json()) != json(r.free_blocks()))
      return false;
    for (size_t i = 0; i < r.seqs.size(); ++i) {
      const PoolReplay::Seq& s = r.seqs[i];
      for (int kv = 0; kv < 2; ++kv) {
        const std::optional<Tensor> t = tensor_at(out["sequences"][i], kv ? "values" : "keys");
        if (!t || t->data.size() != size_t(kHeads) * size_t(s.length) * kDim) return false;
        for (int p = 0; p < s.length; ++p) {
          const int w = s.writer[size_t(p)];
          if (w < 0 || size_t(w) >= key_row.size()) return false;
          const float* row = kv ? value_row[size_t(w)] : key_row[size_t(w)];
          for (int h = 0; h < kHeads; ++h)
            for (int d = 0; d < kDim; ++d)
              if (std::memcmp(
                      &t->data[(size_t(h) * size_t(s.length) + size_t(p)) * kDim + size_t(d)],
                      &row[h * kDim + d], sizeof(float)) != 0)
                return false;
        }
      }
    }
    return true;
  };
  // The whole plan's output must be seen as wrong by this check too, or nothing is said.
  if (holds(plan.size(), actual)) return {};
  // Halving: `good` steps give the rules' state (none trivially), `bad` steps do not.
  size_t good = 0, bad = plan.size();
  while (bad - good > 1) {
    const size_t mid = good + (bad - good) / 2;
    json input = fx.input;
    input["plan"] = json(plan.begin(), plan.begin() + std::ptrdiff_t(mid));
    const std::optional<json> out = run(input);
    if (!out) return {};  // no answer: nothing more is said
    (holds(mid, *out) ? good : bad) = mid;
  }
  const size_t step = bad - 1;
  int n = 0;
  const PoolReplay r = replay_plan(fx, SIZE_MAX, n);
  return {
      "Run again on the plan cut short: after " +
      (good == 0   ? std::string("no step")
       : good == 1 ? std::string("step 0")
                   : "steps 0 .. " + std::to_string(good - 1)) +
      " your code's state (lengths, tables, counts, rows) is the one the rules give; with step " +
      std::to_string(step) + " too it is not. Step " + std::to_string(step) + " " + r.what[step] +
      "."};
}

// ---- stage paged-cache: a GPT-2 prompt forked into branches ---------------------------------

Lines localize_paged_fork(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  const std::vector<int> prompt = ints_of(fx.input.value("prompt", json()));
  const json& branches = fx.input.value("branches", json::array());
  const int n = int(prompt.size());
  PoolReplay r(fx.input.value("n_blocks", 0));
  int step = 0;
  r.create(step);
  r.what.back() = "creates the prompt's sequence";
  ++step;
  r.grow(step++, 0, n, -1, "prefills the " + std::to_string(n) + "-token prompt into its sequence");
  for (size_t b = 0; b < branches.size(); ++b) {
    r.fork(step++, 0, "branch " + std::to_string(b));
    r.what.back().replace(0, std::string("forks sequence 0").size(), "forks the prompt's sequence");
    const std::vector<int> tokens = ints_of(branches[b]);
    for (size_t t = 0; t < tokens.size(); ++t)
      r.grow(step++, int(b) + 1, 1, -1,
             "runs branch " + std::to_string(b) + "'s decode step " + std::to_string(t) +
                 " (token " + std::to_string(tokens[t]) + ")");
  }
  r.release(step++, 0);
  r.what.back().replace(0, std::string("releases sequence 0").size(),
                        "releases the prompt's sequence");
  const json& e = fx.expected;
  Lines none;
  const bool replayed =
      r.valid &&
      structure_differences(r, e.value("branches", json()), e.value("ref_counts", json()), json(),
                            1, "branch", none)
          .empty() &&
      none.empty();
  if (replayed) {
    std::vector<Difference> d =
        structure_differences(r, actual.value("branches", json()),
                              actual.value("ref_counts", json()), json(), 1, "branch", out);
    if (!out.empty()) return out;
    if (!d.empty()) {
      out.push_back(
          "The run, step by step: 0 creates the prompt's sequence, 1 prefills it, then each branch "
          "is a fork "
          "and its decode steps, and the last step releases the prompt's sequence.");
      say_earliest(d, r, "step", out);
      return out;
    }
  }
  // The numbers: the prompt's rows (in branch 0), its logits, then each branch.
  const json& e_br = e.value("branches", json::array());
  const json a_br = actual.value("branches", json());
  if (!a_br.is_array() || a_br.size() != e_br.size()) return out;
  RunPlan prompt_only;
  prompt_only.attention = "attend_causal";
  prompt_only.chunks = {{0, n, -1, "", "", "one of the prompt's positions (paged_prefill)"}};
  if (!e_br.empty() && !localize_run(e_br[0], a_br[0], nullptr, prompt_only,
                                     "Branch 0 (the prompt's blocks it shares): ", out))
    return out;
  std::optional<Digest> el = digest_at(e, "prompt_logits");
  std::optional<Tensor> al = tensor_at(actual, "prompt_logits");
  if (el && (!al || al->shape != el->shape || !rows_matching(*el, *al).front())) {
    out.push_back(
        "The prompt's cache is right (as branch 0 shares it); the prompt's logits (its last "
        "position, from "
        "paged_prefill) differ.");
    return out;
  }
  for (size_t b = 0; b < e_br.size() && b < branches.size(); ++b) {
    const std::vector<int> tokens = ints_of(branches[b]);
    RunPlan plan;
    plan.attention = "attend_one";
    plan.chunks = {
        {0, n, -1, "", "attend_causal", "one of the prompt's positions (paged_prefill)"}};
    for (int t = 0; t < int(tokens.size()); ++t)
      plan.chunks.push_back({n + t, n + t + 1, t, "decode step " + std::to_string(t), "",
                             "branch " + std::to_string(b) + "'s decode step " + std::to_string(t) +
                                 " (token " + std::to_string(tokens[size_t(t)]) + ")"});
    if (!localize_run(e_br[b], a_br[b], "logits", plan, "Branch " + std::to_string(b) + ": ", out))
      return out;
  }
  return out;
}

// ---- stage prefix-cache ---------------------------------------------------------------------

namespace {

uint64_t fnv_block_key(uint64_t parent, const std::vector<int>& tokens, size_t from) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t bytes, int n) {
    for (int i = 0; i < n; ++i) {
      h ^= (bytes >> (8 * i)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  };
  mix(parent, 8);
  for (size_t i = from; i < from + kBlock; ++i) mix(uint32_t(tokens[i]), 4);
  return h;
}

std::string hex_key(uint64_t k) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(k));
  return buf;
}

// What a key is: the first prompt block it names (chained from its parents as
// prefix_cache.hpp says), or the first block whose tokens alone it hashes.
std::string key_story(const std::string& key, const json& prompts) {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::vector<int> t = ints_of(prompts[i]);
      uint64_t parent = 0xcbf29ce484222325ull;
      for (size_t d = 0; (d + 1) * kBlock <= t.size(); ++d) {
        const uint64_t chained = fnv_block_key(parent, t, d * kBlock);
        const uint64_t alone = fnv_block_key(0xcbf29ce484222325ull, t, d * kBlock);
        const std::string where = "prompt " + std::to_string(i) + "'s block " + std::to_string(d) +
                                  " (tokens " + std::to_string(d * kBlock) + " .. " +
                                  std::to_string(d * kBlock + kBlock - 1) + ")";
        if (pass == 0 && hex_key(chained) == key) return "the key of " + where;
        if (pass == 1 && d > 0 && hex_key(alone) == key)
          return "block_key(root_key, its tokens) of " + where +
                 ": that block's tokens alone, without its parent's key";
        parent = chained;
      }
    }
  return "a key of no prompt's full block";
}

}  // namespace

namespace {

// Requests run one after another: the first whose served tokens or logits differ.
void request_findings(const json& prompts, const json& e_req, const json& a_req, Lines& out) {
  for (size_t i = 0; i < e_req.size() && i < prompts.size(); ++i) {
    const int n = int(ints_of(prompts[i]).size());
    const json& ec = e_req[i].value("cached_tokens", json());
    const json ac = a_req[i].is_object() ? a_req[i].value("cached_tokens", json()) : json();
    const std::string who = "Request " + std::to_string(i) + " (prompt " + std::to_string(i) +
                            ", " + count_text(n, "token") + ")";
    const std::string before =
        i == 0   ? ""
        : i == 1 ? " Request 0 served the expected tokens, and its logits are right."
                 : " Requests 0 .. " + std::to_string(i - 1) +
                       " served the expected tokens, and their logits are right.";
    if (ac != ec) {
      std::string s = who + ": your cache served " + short_json(ac, 20) +
                      " tokens from the prefix cache where " + ec.dump() + " are expected";
      if (ac.is_number_integer() && ac.get<int>() % kBlock != 0)
        s += " (" + ac.dump() + " is not a whole number of 16-token blocks)";
      else if (ac.is_number_integer() && ac.get<int>() >= n)
        s += " (the whole prompt: no token is left to compute its logits)";
      out.push_back(s + "." + before);
      break;
    }
    std::optional<Digest> el = digest_at(e_req[i], "logits");
    std::optional<Tensor> al = tensor_at(a_req[i], "logits");
    if (el && (!al || al->shape != el->shape || !rows_matching(*el, *al).front())) {
      out.push_back(who + ": it served the expected " + ec.dump() +
                    " tokens from the cache, and its logits (of its last "
                    "position, computed over the served blocks and the rest of the prompt) differ" +
                    (al && al->shape != el->shape ? ": shape " + shape_text(al->shape) +
                                                        ", expected " + shape_text(el->shape)
                                                  : "") +
                    "." + before);
      break;
    }
  }
}

// The evictions, in order: the first that differs.
void eviction_findings(const json& prompts, const json& ee, const json& ae, Lines& out) {
  if (ae.is_array() && ae != ee) {
    size_t k = 0;
    while (k < ee.size() && k < ae.size() && ae[k] == ee[k]) ++k;
    std::string s =
        "Evictions: " +
        (k == 0 ? std::string("")
                : (k == 1 ? "eviction 0 is right; "
                          : "evictions 0 .. " + std::to_string(k - 1) + " are right; "));
    if (k < ae.size() && k < ee.size())
      s += "eviction " + std::to_string(k) + " is " + short_json(ae[k], 20) + " (" +
           key_story(ae[k].is_string() ? ae[k].get<std::string>() : "", prompts) + ") where " +
           ee[k].dump() + " (" + key_story(ee[k].get<std::string>(), prompts) + ") is expected";
    else if (k < ee.size())
      s += "yours stop after " + count_text(int64_t(ae.size()), "eviction") +
           "; next expected is " + ee[k].dump() + " (" +
           key_story(ee[k].get<std::string>(), prompts) + ")";
    else
      s += "yours evict " + count_text(int64_t(ae.size() - ee.size()), "key") + " more, first " +
           short_json(ae[k], 20) + " (" +
           key_story(ae[k].is_string() ? ae[k].get<std::string>() : "", prompts) + ")";
    out.push_back(s + ".");
  }
}

// The entries at the end, by key: the first expected one that differs or is missing, and
// the first one the reference's cache does not hold.
void entry_findings(const json& prompts, const json& en, const json& an, Lines& out) {
  if (an.is_array() && an != en) {
    std::map<std::string, json> mine;
    for (const json& x : an)
      if (x.is_object() && x.contains("key")) mine[x["key"].dump()] = x;
    for (const json& x : en) {
      auto it = mine.find(x["key"].dump());
      const std::string key = x["key"].get<std::string>();
      if (it == mine.end()) {
        out.push_back("At the end, your cache does not hold " + x["key"].dump() + " (" +
                      key_story(key, prompts) + ", block " + x["block"].dump() + ", last_used " +
                      x["last_used"].dump() + ").");
        break;
      }
      if (it->second != x) {
        std::string s;
        for (const char* f : {"block", "depth", "last_used"})
          if (it->second.value(f, json()) != x[f])
            s += (s.empty() ? "" : ", ") + std::string(f) + " " +
                 it->second.value(f, json()).dump() + " (expected " + x[f].dump() + ")";
        out.push_back("At the end, your entry for " + x["key"].dump() + " (" +
                      key_story(key, prompts) + ") has " + s + ".");
        break;
      }
    }
    for (const json& x : an) {
      if (!x.is_object()) {
        out.push_back("At the end, your entries hold " + short_json(x, 40) +
                      ", which is not an entry.");
        break;
      }
      bool expected = false;
      for (const json& y : en)
        expected = expected || (x.is_object() && y["key"] == x.value("key", json()));
      if (!expected) {
        out.push_back(
            "At the end, your cache holds " + short_json(x.value("key", json()), 20) + " (" +
            key_story(x.value("key", json()).is_string() ? x["key"].get<std::string>() : "",
                      prompts) +
            "), which the reference's does not.");
        break;
      }
    }
  }
}

}  // namespace

Lines localize_prefix_trace(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  const json& prompts = fx.input.value("prompts", json::array());
  const json& e_req = fx.expected.value("requests", json::array());
  const json a_req = actual.value("requests", json());
  if (!a_req.is_array() || a_req.size() != e_req.size())
    return {"requests: " + std::to_string(e_req.size()) + " expected, got " +
            short_json(a_req, 60) + ". Nothing more is read from them."};
  request_findings(prompts, e_req, a_req, out);
  eviction_findings(prompts, fx.expected.value("evicted", json::array()),
                    actual.value("evicted", json()), out);
  entry_findings(prompts, fx.expected.value("entries", json::array()),
                 actual.value("entries", json()), out);
  if (actual.value("ref_counts", json()) != fx.expected.value("ref_counts", json()))
    out.push_back("The pool's reference counts at the end are " +
                  short_json(actual.value("ref_counts", json()), 80) + ", expected " +
                  short_json(fx.expected.value("ref_counts", json()), 80) +
                  " (the cache holds one reference to each block it remembers; every request has "
                  "let its sequence go).");
  return out;
}

// ---- stage continuous-batching ---------------------------------------------------------------

namespace {

// The schedule of batching.hpp's loop, replayed without the model: which requests are
// admitted, decoded and retired at each step, and the free blocks.
struct ScheduleReplay {
  struct Req {
    int prompt = 0, max_new = 1, arrival = 0;
    int full() const { return prompt + max_new - 1; }
  };
  struct Step {
    std::vector<int> prefilled, decoded, retired;
    int free_blocks = 0;
    int free_at_start = 0, committed = 0;  // the admission figures
    std::vector<int> running_at_start;     // by id
    int stopped_at = -1;                   // the first waiting request that did not fit (-1: none)
    std::string stop_reason;
  };
  std::vector<Req> reqs;
  std::vector<Step> steps;
  std::vector<int> length, tokens, blocks;  // per request
  std::vector<int> admitted_at, retired_at;
};

ScheduleReplay replay_schedule(const json& input) {
  ScheduleReplay s;
  const int n_blocks = input.value("n_blocks", 0);
  for (const json& r : input.value("requests", json::array()))
    s.reqs.push_back({int(ints_of(r.value("prompt", json())).size()), r.value("max_new_tokens", 1),
                      r.value("arrival", 0)});
  const size_t n = s.reqs.size();
  s.length.assign(n, 0);
  s.tokens.assign(n, 0);
  s.blocks.assign(n, 0);
  s.admitted_at.assign(n, -1);
  s.retired_at.assign(n, -1);
  int free = n_blocks;
  std::vector<int> running;
  size_t next = 0;
  for (int step = 0; (next < n || !running.empty()) && step < 10000; ++step) {
    ScheduleReplay::Step log;
    log.free_at_start = free;
    log.running_at_start = running;
    int committed = 0;
    for (int id : running)
      committed += blocks_for(s.reqs[size_t(id)].full()) - s.blocks[size_t(id)];
    log.committed = committed;
    while (next < n) {
      const ScheduleReplay::Req& q = s.reqs[next];
      if (q.arrival > step) {
        log.stopped_at = int(next);
        log.stop_reason = "arrives at step " + std::to_string(q.arrival);
        break;
      }
      if (free - committed < blocks_for(q.full())) {
        log.stopped_at = int(next);
        log.stop_reason = "does not fit";
        break;
      }
      committed += blocks_for(q.full());
      log.prefilled.push_back(int(next));
      s.admitted_at[next] = step;
      ++next;
    }
    for (int id : log.prefilled) {
      s.length[size_t(id)] = s.reqs[size_t(id)].prompt;
      s.blocks[size_t(id)] = blocks_for(s.length[size_t(id)]);
      free -= s.blocks[size_t(id)];
      s.tokens[size_t(id)] = 1;
    }
    for (int id : running) {
      log.decoded.push_back(id);
      if (s.length[size_t(id)] % kBlock == 0) ++s.blocks[size_t(id)], --free;
      ++s.length[size_t(id)];
      ++s.tokens[size_t(id)];
    }
    for (int id : log.prefilled) running.push_back(id);
    std::sort(running.begin(), running.end());
    for (size_t i = 0; i < running.size();) {
      const int id = running[i];
      if (s.tokens[size_t(id)] == s.reqs[size_t(id)].max_new) {
        free += s.blocks[size_t(id)];
        s.blocks[size_t(id)] = 0;
        s.retired_at[size_t(id)] = step;
        log.retired.push_back(id);
        running.erase(running.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    }
    log.free_blocks = free;
    s.steps.push_back(std::move(log));
  }
  return s;
}

// The admission rule at step `st` for request `id`, with the figures of the replay.
std::string admission_rule(const ScheduleReplay& s, int st, int id) {
  const ScheduleReplay::Step& log = s.steps[size_t(st)];
  const ScheduleReplay::Req& q = s.reqs[size_t(id)];
  const std::string need = "request " + std::to_string(id) + " needs " + std::to_string(q.prompt) +
                           " prompt + " + std::to_string(q.max_new) +
                           " new - 1 = " + count_text(q.full(), "position") + ", " +
                           count_text(blocks_for(q.full()), "block");
  std::string room = std::to_string(log.free_at_start) + " free at the start of the step";
  if (log.committed > 0)
    room += ", minus " + std::to_string(log.committed) + " the running requests will still take";
  int earlier = 0;  // blocks promised to the requests admitted before it at this step
  for (int p : log.prefilled)
    if (p < id) earlier += blocks_for(s.reqs[size_t(p)].full());
  if (earlier > 0)
    room +=
        ", minus " + std::to_string(earlier) + " for the requests admitted before it at this step";
  const int left = log.free_at_start - log.committed - earlier;
  return need + "; " + room + " leaves " + std::to_string(left) +
         (left >= blocks_for(q.full()) ? ": it fits" : ": it does not fit");
}

std::string why_admitted(const ScheduleReplay& s, int st, int id, bool admitted) {
  const ScheduleReplay::Step& log = s.steps[size_t(st)];
  const ScheduleReplay::Req& q = s.reqs[size_t(id)];
  if (s.admitted_at[size_t(id)] >= 0 && s.admitted_at[size_t(id)] < st)
    return "request " + std::to_string(id) + " was admitted at step " +
           std::to_string(s.admitted_at[size_t(id)]) + ", and a request is admitted once";
  if (q.arrival > st)
    return "request " + std::to_string(id) + " arrives at step " + std::to_string(q.arrival);
  if (!admitted && log.stopped_at >= 0 && log.stopped_at < id)
    return "admission stops at the first waiting request that does not fit, request " +
           std::to_string(log.stopped_at) + " (" + admission_rule(s, st, log.stopped_at) + ")";
  return admission_rule(s, st, id);
}

std::string why_decoded(const ScheduleReplay& s, int st, int id, bool decoded) {
  const int adm = s.admitted_at[size_t(id)], ret = s.retired_at[size_t(id)];
  const std::string r = "request " + std::to_string(id);
  if (decoded)
    return r + " was admitted at step " + std::to_string(adm) + " and has not retired, so step " +
           std::to_string(st) + "'s batch has a row for it (its token " + std::to_string(st - adm) +
           ")";
  if (adm < 0 || adm > st) return r + " is not admitted yet";
  if (adm == st)
    return r +
           " is admitted and prefilled at this step; the batch takes only requests admitted at an "
           "earlier step";
  if (ret >= 0 && ret < st)
    return r + " retired at step " + std::to_string(ret) + ", when it had its " +
           std::to_string(s.reqs[size_t(id)].max_new) + " tokens (max_new_tokens)";
  return r + " is not running";
}

std::string ids(const json& j) { return j.is_array() ? short_json(j, 60) : short_json(j, 30); }

}  // namespace

namespace {

// The first step whose log differs, with the rule that decides it (when the replay gives the
// fixture's schedule).
void schedule_findings(const ScheduleReplay& s, bool replayed, const json& es, const json& as,
                       Lines& out) {
  auto same_step = [](const json& a, const json& e) {
    if (!a.is_object()) return false;
    for (const char* f : {"prefilled", "decoded", "free_blocks"})
      if (a.value(f, json()) != e.value(f, json())) return false;
    return true;
  };
  size_t st = 0;
  while (st < es.size() && st < as.size() && same_step(as[st], es[st])) ++st;
  const std::string right = st == 0 ? ""
                            : st == 1
                                ? " Step 0 is as expected."
                                : " Steps 0 .. " + std::to_string(st - 1) + " are as expected.";
  if (st < es.size() && st < as.size()) {
    const json& a = as[st];
    const json& e = es[st];
    std::string s_text = "Step " + std::to_string(st) + " is the first whose log differs:";
    std::vector<std::string> rules;
    for (const char* f : {"prefilled", "decoded"}) {
      const json av = a.is_object() ? a.value(f, json()) : json();
      if (av == e.value(f, json())) continue;
      s_text += std::string(" ") + f + " " + ids(av) + " where " + ids(e.value(f, json())) +
                " is expected;";
      const std::optional<std::vector<int>> mine = int_list(av);
      const std::vector<int> want = ints_of(e.value(f, json()));
      if (!replayed || !mine) continue;
      for (int id = 0; id < int(s.reqs.size()); ++id) {
        const bool in_mine = std::find(mine->begin(), mine->end(), id) != mine->end();
        const bool in_want = std::find(want.begin(), want.end(), id) != want.end();
        if (in_mine == in_want) continue;
        const bool admit = std::string(f) == "prefilled";
        rules.push_back(
            (in_mine ? "your loop " + std::string(admit ? "admits" : "decodes") + " request " +
                           std::to_string(id)
                     : "it " + std::string(admit ? "admits" : "decodes") + " request " +
                           std::to_string(id) + " where yours does not") +
            ": " +
            (admit ? why_admitted(s, int(st), id, in_want) : why_decoded(s, int(st), id, in_want)));
      }
      if (mine && *mine != want && rules.empty() &&
          std::is_permutation(mine->begin(), mine->end(), want.begin(), want.end()))
        rules.push_back("the same requests in another order: the rows go in id order");
    }
    const json af = a.is_object() ? a.value("free_blocks", json()) : json();
    if (af != e.value("free_blocks", json())) {
      s_text += " free_blocks " + short_json(af, 20) + " where " +
                e.value("free_blocks", json()).dump() + " is expected at the end of the step;";
      if (replayed && rules.empty()) {
        const ScheduleReplay::Step& log = s.steps[st];
        std::string b = "the step starts with " + count_text(log.free_at_start, "free block");
        for (int id : log.prefilled)
          b += "; request " + std::to_string(id) + "'s prefill takes " +
               std::to_string(blocks_for(s.reqs[size_t(id)].prompt));
        for (int id : log.decoded)
          if ((s.reqs[size_t(id)].prompt + (int(st) - s.admitted_at[size_t(id)]) - 1) % kBlock == 0)
            b += "; request " + std::to_string(id) + "'s decode row crosses into a new block";
        for (int id : log.retired)
          b += "; request " + std::to_string(id) + " retires, now that it has its " +
               count_text(s.reqs[size_t(id)].max_new, "token") +
               " (max_new_tokens), and gives back its blocks";
        rules.push_back(b);
      }
    }
    s_text.back() = '.';
    out.push_back(s_text + right);
    for (const std::string& r : rules) out.push_back("By the rules of batching.hpp, " + r + ".");
  } else if (as.size() != es.size()) {
    if (as.size() > es.size()) {
      std::string t = "Your loop runs " + count_text(int64_t(as.size()), "step") + " where " +
                      std::to_string(es.size()) + " are expected." + right;
      if (replayed && !s.steps.empty()) {
        t +=
            " Every request has retired by the end of step " + std::to_string(es.size() - 1) + " (";
        for (size_t id = 0; id < s.reqs.size(); ++id)
          t += (id ? ", " : "") + std::string("request ") + std::to_string(id) + " at step " +
               std::to_string(s.retired_at[id]);
        t += "), and the loop ends after the step at which the last request retires; your step " +
             std::to_string(es.size()) + " has " + short_json(as[es.size()], 80);
      }
      out.push_back(t + ".");
    } else {
      out.push_back("Your loop stops after " + count_text(int64_t(as.size()), "step") + " where " +
                    std::to_string(es.size()) + " are expected." + right);
    }
  }
}

// The first request with a count of tokens other than its max_new_tokens. True when every
// request has its count.
bool token_counts_right(const json& er, const json& ar, Lines& out) {
  if (!ar.is_array() || ar.size() != er.size()) {
    out.push_back("requests: " + std::to_string(er.size()) + " expected, got " +
                  short_json(ar, 40) + ".");
    return false;
  }
  for (size_t id = 0; id < er.size(); ++id) {
    const std::vector<int> et = ints_of(er[id].value("tokens", json()));
    const json at_json = ar[id].is_object() ? ar[id].value("tokens", json()) : json();
    const std::optional<std::vector<int>> at = int_list(at_json);
    if (!at || at->size() != et.size()) {
      out.push_back("Request " + std::to_string(id) + " got " +
                    (at ? count_text(int64_t(at->size()), "token") : short_json(at_json, 30)) +
                    " where max_new_tokens is " + std::to_string(et.size()) + ".");
      return false;
    }
  }
  return true;
}

// The first wrong logits row in the order the steps compute them, with its batch.
void logits_findings(const ScheduleReplay& s, bool replayed, const json& er, const json& ar,
                     size_t n_steps, Lines& out) {
  // The logits, token by token in the order the steps compute them.
  struct Row {
    size_t id;
    int token;
  };
  std::vector<std::vector<Row>> by_step(n_steps);
  if (replayed)
    for (size_t id = 0; id < er.size(); ++id)
      for (int t = 0; t < s.reqs[id].max_new; ++t)
        by_step[size_t(s.admitted_at[id] + t)].push_back({id, t});
  std::vector<std::vector<bool>> ok(er.size());
  for (size_t id = 0; id < er.size(); ++id) {
    std::optional<Digest> el = digest_at(er[id], "logits");
    std::optional<Tensor> al = tensor_at(ar[id], "logits");
    if (!el) continue;
    if (!al || al->shape != el->shape) {
      out.push_back("Request " + std::to_string(id) + "'s logits are " +
                    (al ? shape_text(al->shape) : std::string("missing")) + ", expected " +
                    shape_text(el->shape) + ".");
      return;
    }
    ok[id] = rows_matching(*el, *al);
  }
  for (size_t step = 0; replayed && step < by_step.size(); ++step)
    for (const Row& row : by_step[step]) {
      if (size_t(row.token) >= ok[row.id].size() || ok[row.id][size_t(row.token)]) continue;
      const ScheduleReplay::Step& log = s.steps[step];
      std::string t = "The first wrong logits in the order the steps compute them: request " +
                      std::to_string(row.id) + "'s token " + std::to_string(row.token) +
                      ", at step " + std::to_string(step) + ", ";
      if (row.token == 0) {
        t += "from its prefill (paged_prefill of its " + std::to_string(s.reqs[row.id].prompt) +
             "-token prompt, alone).";
      } else {
        const auto it = std::find(log.decoded.begin(), log.decoded.end(), int(row.id));
        const size_t r = size_t(it - log.decoded.begin());
        t += "row " + std::to_string(r) + " of the batch " + list_text(log.decoded) +
             " (position " + std::to_string(s.reqs[row.id].prompt + row.token - 1) +
             " of its sequence)";
        std::vector<int> right_rows, wrong_rows;
        for (size_t k = 0; k < log.decoded.size(); ++k) {
          const int other = log.decoded[k];
          const int tok = int(step) - s.admitted_at[size_t(other)];
          if (k == r || tok < 0 || size_t(tok) >= ok[size_t(other)].size()) continue;
          (ok[size_t(other)][size_t(tok)] ? right_rows : wrong_rows).push_back(int(k));
        }
        if (!right_rows.empty())
          t += "; the batch's row" + std::string(right_rows.size() == 1 ? " " : "s ") +
               index_list(right_rows) + (right_rows.size() == 1 ? " is" : " are") + " right";
        if (!wrong_rows.empty())
          t += "; row" + std::string(wrong_rows.size() == 1 ? " " : "s ") + index_list(wrong_rows) +
               " differ" + (wrong_rows.size() == 1 ? "s" : "") + " too";
        t += ".";
      }
      out.push_back(t + " Each row must equal that request's paged_decode_step alone.");
      return;
    }
}

}  // namespace

Lines localize_serve(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  const ScheduleReplay s = replay_schedule(fx.input);
  const json& es = fx.expected.value("steps", json::array());
  const json as = actual.value("steps", json());
  // The replay must give the fixture's schedule; otherwise no rule is said.
  bool replayed = s.steps.size() == es.size();
  for (size_t i = 0; replayed && i < es.size(); ++i)
    replayed = es[i].value("prefilled", json()) == json(s.steps[i].prefilled) &&
               es[i].value("decoded", json()) == json(s.steps[i].decoded) &&
               es[i].value("free_blocks", json()) == json(s.steps[i].free_blocks);
  if (!as.is_array()) {
    out.push_back("steps: not a list of steps.");
    return out;
  }
  schedule_findings(s, replayed, es, as, out);
  const json& er = fx.expected.value("requests", json::array());
  const json ar = actual.value("requests", json());
  if (token_counts_right(er, ar, out)) logits_findings(s, replayed, er, ar, es.size(), out);
  return out;
}

}  // namespace course
