// The case builders the committed cases (cases_*.cpp) and the seeded generator
// (cases_random.cpp) share. Each GPT-2 builder carries its `finalize`: the promises the
// generator proves on the reference's output (decode equals Model::forward, prefill equals
// decode bit for bit, ...), on hand-picked and random inputs alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/cases.hpp"

namespace course {

// Each section's builders are defined in the folder of the stage that introduces their
// adapter (stages/<folder>/gen/cases.cpp), and used by that stage's and later stages' cases.

// ---- attention probes and GPT-2 runs ---------------------------------------------------

// A float in about [-2, 2) from (seed, index), with no short binary expansion.
float hashed_float(uint64_t seed, uint64_t index);

// An attention probe's input: n cached positions of hand-made keys and one-hot value rows,
// and n_rows query rows (0: one query, [768]).
json probe_input(int n, int n_rows);
// The same of hashed keys, values and queries.
json random_probe_input(uint64_t seed, int n, int n_rows);

CaseSpec random_attend_one_case(std::string name, std::string checks, uint64_t seed, int n);
CaseSpec random_attend_causal_case(std::string name, std::string checks, uint64_t seed, int n, int n_rows);

// Of a GPT-2 run's work, what a fixture keeps: every layer's qkv and finish_block rows and
// Model::forward's tokens (how many rows were embedded or made logits is left free).
json expected_work(const json& work);
// The generator's promise about that work: each layer saw each of `new_positions` once,
// and Model::forward was not called.
void require_work(const json& work, int64_t new_positions);

// `tokens` decoded one at a time into an empty cache (run_decode).
CaseSpec decode_case(std::string name, std::string checks, std::vector<int> tokens);
// Prefills of `chunks`, one after the other, on one cache (run_prefill).
CaseSpec prefill_case(std::string name, std::string checks, std::vector<std::vector<int>> chunks);
// `prefix` saved once, continued by each suffix (run_prefix_reuse).
CaseSpec reuse_case(std::string name, std::string checks, std::vector<int> prefix,
                    std::vector<std::vector<int>> suffixes);

// ---- speculative rounds ----------------------------------------------------------------

// Speculative rounds after `prompt`: rounds is [{"draft": [ids], "accepted": n, "next": id}].
CaseSpec speculative_case(std::string name, std::string checks, std::vector<int> prompt, json rounds);

// ---- paged forks -----------------------------------------------------------------------

CaseSpec fork_case(std::string name, std::string checks, int n_blocks, std::vector<int> prompt,
                   std::vector<std::vector<int>> branches);

// ---- prefix traces and serving -------------------------------------------------------

// n token ids from a small generator: valid ids, distinct enough that prompts only share
// what a case makes them share.
std::vector<int> words(uint32_t seed, int n);
// v[from, to).
std::vector<int> slice(const std::vector<int>& v, size_t from, size_t to);

CaseSpec trace_case(std::string name, std::string checks, int n_blocks, std::vector<std::vector<int>> prompts);
// requests: [{"prompt": [ids], "max_new_tokens": n, "arrival": step}].
CaseSpec serve_case(std::string name, std::string checks, int n_blocks, json requests);
// One such request.
json serve_request(std::vector<int> prompt, int max_new_tokens, int arrival);
// A server's "requests" output ([{"tokens", "logits"}], by id) proved equal, request by
// request, to the request alone with no cache (Model::forward's logits, greedy tokens);
// returns it with the logits as digests, for the fixture.
json served_alone(const json& requests, const json& served);

// ---- greedy generation -----------------------------------------------------------------

// Greedy generation of n tokens after `prompt`, into a fresh cache (run_generate).
CaseSpec generate_case(std::string name, std::string checks, std::vector<int> prompt, int n);
// `prefix` saved once, each suffix continued on a clone for n tokens (run_generate_from).
CaseSpec continue_case(std::string name, std::string checks, std::vector<int> prefix,
                       std::vector<std::vector<int>> suffixes, int n);

// ---- cases_random.cpp: the seeded generator ---------------------------------------------

// The stages the generator makes cases for, in course order: every stage of
// stages/manifest.json (gen/stage_cases.hpp).
std::vector<std::string> random_stages();

// `count` new cases of `stage`, the same for the same (stage, seed, count) on any machine:
// names "r<seed>-01-<what>", ..., a `checks` sentence saying what was drawn. Throws
// std::invalid_argument for a stage it has no generator for.
std::vector<CaseSpec> random_cases(const std::string& stage, uint64_t seed, int count);

}  // namespace course
