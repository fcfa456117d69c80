// Localization of the server loop (run_serve): the schedule replayed with the admission
// rule of batching.hpp; the first step whose admitted, decoded or free-block figure
// differs, with the rule that decides it; then the first request, token and batch row
// whose logits differ.
#include "judge/localize.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

namespace course {

namespace {

constexpr int kBlock = kPagedBlock;

}  // namespace

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
      const std::optional<std::vector<int>> mine = exact_ints(av);
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
    const std::optional<std::vector<int>> at = exact_ints(at_json);
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
    if (std::string problem = request_logits_shape_problem(id, al, *el); !problem.empty()) {
      out.push_back(std::move(problem));
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
