// The localizers' shared parts (diagnose.hpp: localize). Each turns one failing case's
// output into a few sentences of what is observed, in computation order: what is right,
// the first number that is not, and what lies between them. None names a mistake.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "judge/diagnose.hpp"
#include "wire/digest.hpp"

namespace course {

using Lines = std::vector<std::string>;

// "" when `row` is a shape row [12, L, 64] with L >= 0; else a sentence on what it is,
// e.g. "[3, 12, 64] is not [12, length, 64]".
std::string shape_row_problem(const json& row);

// Checks a list of per-layer shape rows against the expected one, in order: the count,
// then each row's form, then the lengths. Adds what it sees to `out` and returns true
// when every row is as expected. `what` names the list ("the saved cache's rows").
// `readable` (if given) tells whether the rows had the right count and form, so that their
// lengths can be read.
bool rows_as_expected(const json& expected, const json& actual, const std::string& what, Lines& out,
                      bool* readable = nullptr);

// The tensor or digest at `key` of `j`, when it is one and well formed.
std::optional<Tensor> tensor_at(const json& j, const char* key);
std::optional<Digest> digest_at(const json& j, const char* key);

// "0 .. 4", or "3" for one value; "heads 0 .. 11", "heads 0, 4".
std::string range_text(int first, int last);
std::string index_list(const std::vector<int>& values);

// The whole numbers of a JSON list, in order; anything else in it (or a `j` that is not a
// list) is left out.
std::vector<int> ints_of(const json& j);

// The whole numbers of a JSON list when every entry is one, else nullopt.
std::optional<std::vector<int>> exact_ints(const json& j);

// A paged block's positions (include/course/paged.hpp's block_size, written again here so
// that the judge does not read the learner's tree), and the blocks n positions take.
inline constexpr int kPagedBlock = 16;
inline int blocks_for(int n) { return (n + kPagedBlock - 1) / kPagedBlock; }

// Whether the learner's "continued" has one entry per expected continuation; if not, the
// finding is said in `out` and nothing more is read from them.
bool same_count_of_continuations(const json& e_cont, const json& a_cont, Lines& out);

// "1 position", "3 positions".
std::string count_text(int64_t n, const std::string& noun);

// How far apart two floats are in units in the last place (both finite); -1 otherwise.
int64_t ulp_distance(float a, float b);

// What a GPT-2 run computes together (stage one-token's localize.cpp): positions [from, to) through
// every layer, then (when logits_row >= 0) the logits of the chunk's last position.
struct Chunk {
  int from = 0, to = 0;
  int logits_row = -1;
  std::string logits_name;  // "step 3", "chunk 1"
  std::string attention;    // when not the plan's: "attend_causal" for a prefill among decode steps
  std::string what;         // what its positions are, said after a wrong row there ("round 1's next token")
  Chunk(int from_, int to_, int logits_row_ = -1, std::string logits_name_ = "", std::string attention_ = "",
        std::string what_ = "")
      : from(from_), to(to_), logits_row(logits_row_), logits_name(std::move(logits_name_)),
        attention(std::move(attention_)), what(std::move(what_)) {}
};

struct RunPlan {
  std::vector<Chunk> chunks;
  std::string attention;  // "attend_one", "attend_causal"
};

// One run's output ({"cache_shapes", "keys", "values"} and the logits at `logits_key` of
// `e`/`a`, if any) against the expected one, in `plan`'s order: adds what it finds to
// `out` and returns true when all is right.
bool localize_run(const json& e, const json& a, const char* logits_key, const RunPlan& plan, const std::string& who,
                  Lines& out);

// "[12, 5, 64]".
std::string shape_text(const std::vector<int64_t>& shape);

// A server's request `id` whose logits are missing or not of the expected digest's shape:
// "Request 2's logits are [3, 50257], expected [4, 50257]." ("" when the shapes agree).
std::string request_logits_shape_problem(size_t id, const std::optional<Tensor>& actual, const Digest& expected);

// The localizers, each defined in the folder of the stage that introduces its adapter
// (stages/<folder>/grader/localize.cpp) and named by that stage's rules (rules.cpp); and
// the work findings (work.cpp).
Lines localize_cache_plan(const Fixture& fx, const json& actual);
Lines localize_read_kvcache(const Fixture& fx, const json& actual);
Lines localize_model_cache(const Fixture& fx, const json& actual);
Lines localize_probe(const Fixture& fx, const json& actual);
Lines localize_gpt2_run(const Fixture& fx, const json& actual);
Lines localize_generation(const Fixture& fx, const json& actual);
Lines work_findings(const Fixture& fx, const json& actual);
Lines localize_speculative(const Fixture& fx, const json& actual);
Lines localize_paged_plan(const Fixture& fx, const json& actual);
// A run of the learner's adapter on another input (the plan cut short): its output, or
// nullopt when it gave none (a throw, a crash, a limit).
using PlanRunner = std::function<std::optional<json>(const json& input)>;
// A failed paged plan run again on its first steps (by halving, about log2(steps) runs):
// the step after which the learner's state first departs from the rules' in those runs,
// said with what it does. Empty when the replay does not give the fixture's state, the
// check does not see `actual` as wrong, or a run gives no output.
Lines locate_paged_plan_divergence(const Fixture& fx, const json& actual, const PlanRunner& run);
Lines localize_paged_fork(const Fixture& fx, const json& actual);
Lines localize_prefix_trace(const Fixture& fx, const json& actual);
Lines localize_serve(const Fixture& fx, const json& actual);

}  // namespace course
