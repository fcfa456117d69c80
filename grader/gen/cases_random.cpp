// The seeded generator: new cases of every stage from (seed, count), for the hidden set
// (make-fixtures --hidden) and for fresh cases at grading time (grader --random). Every
// case goes through the same builders, and the same `finalize` promises, as the committed
// ones (builders.hpp); only the inputs are drawn.
//
// The draws use their own generator (splitmix64) and their own reduction to a range, never
// <random>'s distributions, whose results the C++ standard leaves to each library: the
// same seed gives the same cases with any compiler. GPT-2 runs are kept to a few tokens
// each (grading time), the plans to a few dozen steps.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "gen/builders.hpp"
#include "wire/adapter_spec.hpp"

namespace course {

namespace {

// splitmix64: a seed in, a stream of well-mixed 64-bit numbers out.
class Draw {
 public:
  explicit Draw(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // A whole number from lo to hi, both included (the modulo's bias is far below what matters).
  int between(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }
  bool chance(int percent) { return between(1, 100) <= percent; }
  int token() { return between(0, kInputVocab - 1); }
  std::vector<int> tokens(int n) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) out.push_back(token());
    return out;
  }

 private:
  uint64_t state_;
};

// A case's draws depend on (seed, stage, case number) only: case 2 of a seed is the same
// whatever the count.
Draw draw_for(uint64_t seed, const std::string& stage, int index) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the stage's slug
  for (char c : stage) h = (h ^ uint64_t(static_cast<unsigned char>(c))) * 1099511628211ull;
  Draw mix(seed ^ h);
  for (int i = 0; i <= index; ++i) mix.next();
  return Draw(mix.next());
}

std::string case_name(uint64_t seed, int index, const std::string& what) {
  char number[16];
  std::snprintf(number, sizeof number, "%02d", index + 1);
  return "r" + std::to_string(seed) + "-" + number + "-" + what;
}

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string list_text(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// ---- one layer's cache: plans of create, append (self-describing rows), clone, crop ----

struct CachePlan {
  json plan = json::array();
  std::vector<int> lengths;  // per cache
  int appends = 0, clones = 0, creates = 0, crops = 0;

  void create() {
    plan.push_back({{"op", "create"}});
    lengths.push_back(0);
    ++creates;
  }
  void append(int cache) {
    json op = describing_row(appends++);
    op["op"] = "append";
    op["cache"] = cache;
    plan.push_back(std::move(op));
    ++lengths[size_t(cache)];
  }
  void clone(int cache) {
    plan.push_back({{"op", "clone"}, {"cache", cache}});
    lengths.push_back(lengths[size_t(cache)]);
    ++clones;
  }
  void crop(int cache, int n) {
    plan.push_back({{"op", "crop"}, {"cache", cache}, {"n", n}});
    if (n >= 0 && n <= lengths[size_t(cache)]) lengths[size_t(cache)] = n;
    ++crops;
  }
  int any_cache(Draw& d) const { return d.between(0, int(lengths.size()) - 1); }
  std::string counts() const {
    std::string s = plural(creates, "create", "creates") + ", " + plural(appends, "append", "appends") + ", " +
                    plural(clones, "clone", "clones");
    return crops ? s + ", " + plural(crops, "crop", "crops") : s;
  }
};

// Steps of create, append and clone (and crop, with_crops), at least one append.
CachePlan draw_cache_plan(Draw& d, bool with_crops) {
  CachePlan p;
  p.create();
  const int steps = d.between(4, 16);
  for (int s = 0; s < steps || p.appends == 0; ++s) {
    const int roll = d.between(1, 100);
    if (roll <= 8 && p.lengths.size() < 5) {
      p.create();
    } else if (roll <= 22 && p.lengths.size() < 6) {
      p.clone(p.any_cache(d));
    } else if (with_crops && roll <= 40) {
      const int c = p.any_cache(d);
      p.crop(c, d.between(0, p.lengths[size_t(c)]));
    } else {
      const int c = p.any_cache(d);
      for (int t = d.between(1, 3); t > 0; --t) p.append(c);
    }
  }
  return p;
}

std::vector<CaseSpec> cache_structure(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "cache-structure", i);
    const CachePlan p = draw_cache_plan(d, false);
    cases.push_back({"cache-structure", case_name(seed, i, "plan"),
                     "A random plan of " + p.counts() + ", ending with cache lengths " + list_text(p.lengths) +
                         ": every cache holds exactly the rows appended to it (or to what it was cloned from), in order.",
                     "run_cache_plan", {{"plan", p.plan}}, nullptr});
  }
  return cases;
}

// ---- twelve layers: append lists and clones ----------------------------------------------

std::vector<int> draw_layers(Draw& d, int most) {
  std::vector<int> out;
  for (int n = d.between(0, most); n > 0; --n) out.push_back(d.between(0, kInputLayers - 1));
  return out;
}

std::vector<CaseSpec> multi_layer_cache(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "multi-layer-cache", i);
    if (i % 2 == 0) {
      const std::vector<int> appends = draw_layers(d, 16);
      cases.push_back({"multi-layer-cache", case_name(seed, i, "appends"),
                       "Appends to the layers " + list_text(appends) + ": each layer's length counts the appends made to it.",
                       "run_model_cache_shapes", {{"appends", appends}}, nullptr});
    } else {
      const std::vector<int> before = draw_layers(d, 8), after_original = draw_layers(d, 5),
                             after_clone = draw_layers(d, 5);
      cases.push_back({"multi-layer-cache", case_name(seed, i, "clone"),
                       "Appends " + list_text(before) + ", a clone, then " + list_text(after_original) +
                           " to the original and " + list_text(after_clone) + " to the clone: each side keeps its own.",
                       "run_model_cache_clone",
                       {{"before", before}, {"after_original", after_original}, {"after_clone", after_clone}},
                       nullptr});
    }
  }
  return cases;
}

// ---- attention and GPT-2 runs --------------------------------------------------------------

std::vector<CaseSpec> one_token(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "one-token", i);
    if (i % 2 == 0) {
      const int n = d.between(1, 40);
      cases.push_back(random_attend_one_case(
          case_name(seed, i, "attend-one"),
          "One query over " + plural(n, "position", "positions") +
              " of random keys and values: the dot products, softmax and weighted sum in the specified order.",
          d.next() >> 16, n));
    } else {
      const std::vector<int> tokens = d.tokens(d.between(1, 3));
      cases.push_back(decode_case(case_name(seed, i, "decode"),
                                  "The random tokens " + list_text(tokens) +
                                      " decoded one at a time: every step's logits equal the no-cache forward pass.",
                                  tokens));
    }
  }
  return cases;
}

std::vector<CaseSpec> prefill(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefill", i);
    if (i % 2 == 0) {
      const int n = d.between(1, 32), n_rows = d.between(1, n);
      cases.push_back(random_attend_causal_case(
          case_name(seed, i, "attend-causal"),
          "The last " + plural(n_rows, "query row", "query rows") + " of " + plural(n, "position", "positions") +
              " of random keys and values: each row attends to the positions up to its own.",
          d.next() >> 16, n, n_rows));
    } else {
      std::vector<std::vector<int>> chunks;
      std::string sizes;
      for (int c = d.between(1, 2); c > 0; --c) {
        chunks.push_back(d.tokens(d.between(1, 3)));
        sizes += (sizes.empty() ? "" : " and ") + std::to_string(chunks.back().size());
      }
      cases.push_back(prefill_case(case_name(seed, i, "prefill"),
                                   "Random prompt chunks of " + sizes +
                                       " tokens prefilled in turn: logits and cache equal decoding them one at a time.",
                                   chunks));
    }
  }
  return cases;
}

std::vector<CaseSpec> prefix_reuse(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefix-reuse", i);
    const std::vector<int> prefix = d.tokens(d.between(1, 4));
    std::vector<std::vector<int>> suffixes;
    for (int s = d.between(1, 3); s > 0; --s)
      suffixes.push_back(!suffixes.empty() && d.chance(25) ? suffixes.back() : d.tokens(d.between(1, 2)));
    const int reused = int(prefix.size() * suffixes.size());
    cases.push_back(reuse_case(case_name(seed, i, "reuse"),
                               "A random " + std::to_string(prefix.size()) + "-token prefix continued by " +
                                   plural(int(suffixes.size()), "random suffix", "random suffixes") + ": " +
                                   std::to_string(reused) + " positions reused, each continuation equal to a fresh prefill.",
                               prefix, suffixes));
  }
  return cases;
}

// ---- rollback: crop plans and speculative rounds -----------------------------------------

CaseSpec random_crop_case(uint64_t seed, int i, Draw& d) {
  CachePlan p = draw_cache_plan(d, true);
  const bool bad_crop = d.chance(30);
  std::string checks = "A random plan of " + p.counts();
  CaseSpec c{"rollback", "", "", "run_cache_plan", json(), nullptr};
  if (bad_crop) {
    const int cache = p.any_cache(d), length = p.lengths[size_t(cache)];
    const int n = d.chance(50) ? -d.between(1, 3) : length + d.between(1, 3);
    p.crop(cache, n);
    c.name = case_name(seed, i, "crop-out-of-range");
    checks += ", then crop(" + std::to_string(n) + ") on a cache of " + std::to_string(length) +
              " positions: that crop throws std::out_of_range.";
    c.expect_error = true;
  } else {
    c.name = case_name(seed, i, "crops");
    checks += ", ending with cache lengths " + list_text(p.lengths) + ": every cache keeps exactly its first rows.";
  }
  c.checks = checks;
  c.input = {{"plan", p.plan}};
  return c;
}

CaseSpec random_speculative_case(uint64_t seed, int i, Draw& d) {
  const std::vector<int> prompt = d.tokens(d.between(1, 3));
  json rounds = json::array();
  std::string summary;
  for (int r = d.between(1, 2); r > 0; --r) {
    const std::vector<int> draft = d.tokens(d.between(0, 3));
    const int accepted = d.between(0, int(draft.size()));
    rounds.push_back({{"draft", draft}, {"accepted", accepted}, {"next", d.token()}});
    summary += (summary.empty() ? "" : ", ") + std::to_string(accepted) + " of " + std::to_string(draft.size());
  }
  return speculative_case(case_name(seed, i, "speculate"),
                          "After a random " + std::to_string(prompt.size()) + "-token prompt, rounds accepting " +
                              summary + " random drafts: the logits and cache of a model that never saw the rejected ones.",
                          prompt, rounds);
}

std::vector<CaseSpec> rollback(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "rollback", i);
    cases.push_back(i % 2 == 0 ? random_crop_case(seed, i, d) : random_speculative_case(seed, i, d));
  }
  return cases;
}

// ---- paged-cache: plans on a small pool, and GPT-2 forks ---------------------------------

CaseSpec random_paged_plan(uint64_t seed, int i, Draw& d) {
  const int n_blocks = d.between(2, 6);
  json plan = json::array({{{"op", "create"}}});
  int n_sequences = 1, appends = 0, grows = 0, forks = 0, releases = 0;
  for (int s = d.between(4, 12); s > 0 || appends == 0; --s) {
    const int roll = d.between(1, 100), seq = d.between(0, n_sequences - 1);
    if (roll <= 10) {
      plan.push_back({{"op", "create"}});
      ++n_sequences;
    } else if (roll <= 25) {
      plan.push_back({{"op", "fork"}, {"sequence", seq}});
      ++n_sequences;
      ++forks;
    } else if (roll <= 33) {
      plan.push_back({{"op", "release"}, {"sequence", seq}});
      ++releases;
    } else {
      const int t = d.chance(30) ? d.between(10, 20) : d.between(1, 4);
      if (t > 1 && d.chance(40)) {
        // One append of t positions (one grow(t)): it may need a copy-on-write block and
        // new blocks at once, which t appends of one never do.
        json op = describing_rows(appends, t);
        appends += t;
        op["op"] = "append";
        op["sequence"] = seq;
        op["n"] = t;
        plan.push_back(std::move(op));
        ++grows;
        continue;
      }
      for (int k = 0; k < t; ++k) {
        json op = describing_row(appends++);
        op["op"] = "append";
        op["sequence"] = seq;
        plan.push_back(std::move(op));
      }
    }
  }
  return {"paged-cache",
          case_name(seed, i, "plan"),
          "A random plan on a pool of " + plural(n_blocks, "block", "blocks") + ": " +
              plural(appends, "position", "positions") + " appended" +
              (grows ? " (" + plural(grows, "append", "appends") + " of several at once)" : "") +
              " over " + plural(n_sequences, "sequence", "sequences") + ", " +
              plural(forks, "fork", "forks") + ", " + plural(releases, "release", "releases") +
              "; block tables, counts and rows follow from lowest-free-block allocation and "
              "copy-on-write.",
          "run_paged_plan",
          {{"n_blocks", n_blocks}, {"plan", plan}},
          nullptr};
}

CaseSpec random_fork_case(uint64_t seed, int i, Draw& d) {
  // Prompts of 13 to 17 tokens: branches of 1 to 3 tokens cross into a second block or
  // share a full one.
  const std::vector<int> prompt = d.tokens(d.between(13, 17));
  std::vector<std::vector<int>> branches;
  std::vector<int> sizes;
  for (int b = d.between(1, 2); b > 0; --b) {
    branches.push_back(d.tokens(d.between(1, 3)));
    sizes.push_back(int(branches.back().size()));
  }
  return fork_case(case_name(seed, i, "fork"),
                   "A random " + std::to_string(prompt.size()) + "-token prompt forked into branches of " +
                       list_text(sizes) + " tokens: each equals Model::forward of prompt + branch.",
                   8, prompt, branches);
}

std::vector<CaseSpec> paged_cache(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "paged-cache", i);
    cases.push_back(i % 3 == 2 ? random_fork_case(seed, i, d) : random_paged_plan(seed, i, d));
  }
  return cases;
}

// ---- prefix-cache and continuous-batching ------------------------------------------------

int blocks_for(size_t positions) { return int((positions + 15) / 16); }

std::vector<CaseSpec> prefix_cache(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "prefix-cache", i);
    // Two stems; each prompt is one stem's first 17 to 20 tokens, or a short one of its own,
    // so that whole blocks are shared, and sometimes evicted.
    const std::vector<int> stems[2] = {d.tokens(20), d.tokens(20)};
    std::vector<std::vector<int>> prompts;
    int largest = 1;
    for (int p = d.between(2, 3); p > 0; --p) {
      const std::vector<int>& stem = stems[d.between(0, 1)];
      prompts.push_back(d.chance(75) ? std::vector<int>(stem.begin(), stem.begin() + d.between(17, 20))
                                     : d.tokens(d.between(2, 5)));
      largest = std::max(largest, blocks_for(prompts.back().size()));
    }
    const int n_blocks = largest + d.between(0, 2);
    std::vector<int> lengths;
    for (const auto& p : prompts) lengths.push_back(int(p.size()));
    cases.push_back(trace_case(case_name(seed, i, "trace"),
                               "Random prompts of " + list_text(lengths) + " tokens, drawn so that some share their first 16-token block, through a pool of " +
                                   plural(n_blocks, "block", "blocks") +
                                   ": cached tokens, evictions and logits as the lesson's rules give them.",
                               n_blocks, prompts));
  }
  return cases;
}

std::vector<CaseSpec> continuous_batching(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "continuous-batching", i);
    json requests = json::array();
    int largest = 1;
    std::string summary;
    for (int r = d.between(1, 3); r > 0; --r) {
      const int prompt = d.between(1, 4), max_new = d.between(1, 3), arrival = d.between(0, 2);
      requests.push_back({{"prompt", d.tokens(prompt)}, {"max_new_tokens", max_new}, {"arrival", arrival}});
      largest = std::max(largest, blocks_for(size_t(prompt + max_new - 1)));
      summary += (summary.empty() ? "" : "; ") + plural(prompt, "token", "tokens") + ", " + std::to_string(max_new) +
                 " new, arriving at step " + std::to_string(arrival);
    }
    const int n_blocks = largest + d.between(0, 2);
    cases.push_back(serve_case(case_name(seed, i, "serve"),
                               "Random requests (" + summary + ") on a pool of " + plural(n_blocks, "block", "blocks") +
                                   ": each request's tokens and logits equal the request run alone.",
                               n_blocks, requests));
  }
  return cases;
}

std::vector<CaseSpec> generate(uint64_t seed, int count) {
  std::vector<CaseSpec> cases;
  for (int i = 0; i < count; ++i) {
    Draw d = draw_for(seed, "generate", i);
    const int n = d.between(1, 6);
    if (i % 2 == 0) {
      const std::vector<int> prompt = d.tokens(d.between(1, 4));
      cases.push_back(generate_case(case_name(seed, i, "generate"),
                                    "Greedy generation of " + plural(n, "token", "tokens") + " after the random prompt " +
                                        list_text(prompt) + ": the reference's tokens and every step's logits.",
                                    prompt, n));
    } else {
      const std::vector<int> prefix = d.tokens(d.between(1, 4));
      std::vector<std::vector<int>> suffixes;
      for (int s = d.between(1, 2); s > 0; --s) suffixes.push_back(d.tokens(d.between(1, 3)));
      cases.push_back(continue_case(case_name(seed, i, "continue"),
                                    "The random prefix " + list_text(prefix) + " saved once and continued by " +
                                        plural(int(suffixes.size()), "suffix", "suffixes") + " for " +
                                        plural(n, "token", "tokens") + " each, on clones.",
                                    prefix, suffixes, n));
    }
  }
  return cases;
}

using StageGenerator = std::vector<CaseSpec> (*)(uint64_t seed, int count);

const std::vector<std::pair<std::string, StageGenerator>>& generators() {
  static const std::vector<std::pair<std::string, StageGenerator>> table = {
      {"cache-structure", cache_structure}, {"multi-layer-cache", multi_layer_cache},
      {"one-token", one_token},             {"prefill", prefill},
      {"prefix-reuse", prefix_reuse},       {"rollback", rollback},
      {"paged-cache", paged_cache},         {"prefix-cache", prefix_cache},
      {"continuous-batching", continuous_batching}, {"generate", generate},
  };
  return table;
}

}  // namespace

std::vector<std::string> random_stages() {
  std::vector<std::string> slugs;
  for (const auto& [slug, generate] : generators()) slugs.push_back(slug);
  return slugs;
}

std::vector<CaseSpec> random_cases(const std::string& stage, uint64_t seed, int count) {
  for (const auto& [slug, generate] : generators())
    if (slug == stage) return generate(seed, count);
  throw std::invalid_argument("no generator of random cases for stage \"" + stage + "\"");
}

}  // namespace course
