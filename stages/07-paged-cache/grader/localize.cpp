// Localization for stage paged-cache's plans and forks.
//
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "judge/localize.hpp"
#include "wire/shape.hpp"

namespace course {

namespace {

constexpr int kBlock = kPagedBlock;
constexpr int kDModel = shape::kDModel, kHeads = shape::kHeads, kDim = shape::kHeadDim;


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
        exact_ints(a.is_object() ? a.value("block_table", json()) : json());
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
  const std::optional<std::vector<int>> counts = exact_ints(a_counts);
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
    const std::optional<std::vector<int>> ex = exact_ints(a_exhausted);
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

}  // namespace course
