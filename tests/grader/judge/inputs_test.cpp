// The adapters' specs (wire/adapter_spec.hpp) as the grader checks fixtures by them
// (judge/stage_fixtures.hpp) and a runner checks its requests: one spec per binding,
// every committed fixture accepted, and the problem of a broken one named; and their
// output half, which every fixture's expected output and every answer read must satisfy.
#include "judge/stage_fixtures.hpp"

#include <gtest/gtest.h>

#include <map>

#include "course/kvcache.hpp"
#include "gpt2.hpp"
#include "judge/adapter_rules.hpp"
#include "judge/answer.hpp"
#include "judge/stages.hpp"
#include "runner/bindings.hpp"
#include "test_support.hpp"

using namespace course;
using testing_support::has;
using testing_support::source_dir;

namespace {

Fixture fixture_with(const std::string& adapter, const json& input) {
  Fixture f;
  f.file = "fixtures/x/01-case.json";
  f.adapter = adapter;
  f.input = input;
  return f;
}

// The FixtureError of checking (adapter, input), or "" when it passes.
std::string input_error(const std::string& adapter, const json& input) {
  try {
    check_case_input(fixture_with(adapter, input));
  } catch (const FixtureError& e) {
    return e.what();
  }
  return "";
}

json floats(size_t n) {
  Tensor t;
  t.shape = {int64_t(n)};
  t.data.assign(n, 0.5f);
  return tensor_to_json(t, TensorEncoding::base64);
}

json weights() { return {{"kind", "synthetic"}, {"config", "gpt2-small"}, {"seed", 2026}}; }

}  // namespace

TEST(inputs, the_table_names_exactly_the_adapters_a_runner_serves) {
  std::vector<std::string> runner;
  for (const auto& [name, binding] : adapter_table()) runner.push_back(name);
  EXPECT_EQ(served_adapters(), runner);
}

// An adapter's home is the first stage whose fixtures use it: that stage's folder states
// its input form (grader/spec.cpp), registers its binding (grader/bindings.cpp) and states
// its rules (grader/rules.cpp), and no other stage does any of the three.
TEST(inputs, each_adapter_has_one_home_the_stage_that_first_uses_it) {
  std::map<std::string, std::string> home;  // adapter -> slug of its first use
  for (const Stage& stage : stage_table())
    for (const Fixture& f : load_stage_fixtures(source_dir() / "fixtures" / stage.slug, stage.slug, ""))
      home.emplace(f.adapter, stage.slug);
  std::map<std::string, std::vector<std::string>> specs, bindings, rules;  // adapter -> stating stages
  for (const StageSpecs& s : stage_specs())
    for (const AdapterSpec& a : s.specs()) specs[a.name].push_back(s.slug);
  for (const StageBindings& s : stage_bindings()) {
    AdapterTable table;
    s.register_adapters(table);
    for (const auto& [name, binding] : table) bindings[name].push_back(s.slug);
  }
  for (const StageAdapterRules& s : stage_adapter_rules())
    for (const AdapterRules& r : s.rules()) rules[r.name].push_back(s.slug);
  for (const auto& [adapter, slug] : home) {
    EXPECT_EQ(specs[adapter], std::vector<std::string>{slug}) << adapter << ": its input form";
    EXPECT_EQ(bindings[adapter], std::vector<std::string>{slug}) << adapter << ": its binding";
    EXPECT_EQ(rules[adapter], std::vector<std::string>{slug}) << adapter << ": its rules";
  }
  for (const auto* table : {&specs, &bindings, &rules})
    for (const auto& [adapter, stages] : *table) EXPECT_TRUE(home.count(adapter)) << adapter << " is used by no fixture";
}

TEST(inputs, the_sizes_are_the_course_and_model_sizes) {
  EXPECT_EQ(kInputLayers, n_layers);
  EXPECT_EQ(kInputModelDim, d_model);
  EXPECT_EQ(kInputVocab, gpt2::gpt2_small().vocab);
}

TEST(inputs, every_committed_fixture_and_stage_setup_passes) {
  for (const Stage& stage : stage_table()) {
    EXPECT_EQ(setup_problem(stage.setup), "") << stage.slug;
    const auto fixtures = load_stage_fixtures(source_dir() / "fixtures" / stage.slug, stage.slug, "");
    EXPECT_FALSE(fixtures.empty()) << stage.slug;
  }
}

TEST(inputs, an_unknown_adapter_is_named_with_the_ones_served) {
  const std::string message = input_error("run_cache_plann", json::object());
  EXPECT_TRUE(has(message, "fixtures/x/01-case.json: adapter \"run_cache_plann\" is not one the runners serve"))
      << message;
  EXPECT_TRUE(has(message, "run_cache_plan, run_decode")) << message;
}

TEST(inputs, a_malformed_input_names_the_field) {
  const json plan = {{"plan", {{{"op", "create"}}, {{"op", "append"}, {"cache", 0}, {"k", floats(768)}, {"v", floats(5)}}}}};
  EXPECT_TRUE(has(input_error("run_cache_plan", plan), "input.plan[1].v: must hold 768 floats, not 5"));
  EXPECT_TRUE(has(input_error("run_cache_plan", {{"plan", {{{"op", "append"}, {"cache", 0}}}}}),
                  "input.plan[0]: names a cache before any was created"));
  EXPECT_TRUE(has(input_error("run_cache_plan", {{"plan", {{{"op", "grow"}}}}}), "input.plan[0].op: must be"));
  EXPECT_TRUE(has(input_error("run_model_cache_shapes", {{"appends", {0, 12}}}),
                  "input.appends[1]: must be a whole number from 0 to 11, not 12"));
  // 2^32 + 1 would become layer 1 as an int: refused whole.
  EXPECT_TRUE(has(input_error("run_model_cache_shapes", {{"appends", {uint64_t(4294967297)}}}), "not 4294967297"));
  EXPECT_TRUE(has(input_error("run_model_cache_clone", {{"before", json::array()}, {"after_clone", json::array()}}),
                  "input: has no \"after_original\""));
  EXPECT_TRUE(has(input_error("run_decode", {{"weights", weights()}, {"tokens", {464, 50257}}}),
                  "input.tokens[1]: must be a whole number from 0 to 50256"));
  EXPECT_TRUE(has(input_error("run_decode", {{"weights", weights()}, {"tokens", json::array()}}),
                  "input.tokens: must not be empty"));
  EXPECT_TRUE(has(input_error("run_prefill", {{"weights", weights()}, {"chunks", {{1, 2}, json::array()}}}),
                  "input.chunks[1]: must not be empty"));
  EXPECT_TRUE(has(input_error("run_prefill", {{"weights", weights()}, {"tokens", {1}}}), "input: has no \"chunks\""));
  EXPECT_TRUE(has(input_error("read_kvcache", {{"keys", floats(768)}, {"values", floats(768)}}), "\"keys\" and \"values\" must both be [n, 768]"));
  json w = weights();
  w["seed"] = -1;
  EXPECT_TRUE(has(input_error("run_decode", {{"weights", w}, {"tokens", {1}}}), "input.weights.seed"));
  EXPECT_TRUE(has(input_error("run_prefix_reuse", {{"weights", weights()}, {"prefix", {1}}, {"suffixes", {{1}, "x"}}}),
                  "input.suffixes[1]: must be a list of whole numbers"));
  EXPECT_TRUE(has(input_error("attend_one", {{"keys", floats(768)}, {"values", floats(768)}, {"q", floats(768)}}),
                  "\"keys\" and \"values\" must both be [n, 768]"));
  EXPECT_TRUE(has(input_error("attend_one", {{"keys", 5}}), "input.keys: a tensor must be a JSON object"));
  EXPECT_TRUE(has(input_error("run_decode", json::array()), "input: must be an object"));
  const json gen = {{"weights", weights()}, {"prompt", {1, 2}}, {"max_new_tokens", 4}};
  EXPECT_EQ(input_error("run_generate", gen), "");
  json zero = gen;
  zero["max_new_tokens"] = 0;
  EXPECT_TRUE(has(input_error("run_generate", zero), "input.max_new_tokens: must be a whole number from 1 to 256"));
  const json from = {{"weights", weights()}, {"prefix", std::vector<int>(1000, 1)}, {"suffixes", {{1}, std::vector<int>(20, 2)}},
                     {"max_new_tokens", 6}};
  EXPECT_TRUE(has(input_error("run_generate_from", from), "1020 prompt positions and 6 new tokens do not fit in the model's 1024"));
}

// A paged plan's append of n positions carries n rows of k and of v; "n" left out is 1.
TEST(inputs, a_paged_append_of_n_positions_carries_n_rows) {
  auto plan = [](const json& append) {
    return json{{"n_blocks", 2}, {"plan", {{{"op", "create"}}, append}}};
  };
  json one = {{"op", "append"}, {"sequence", 0}, {"k", floats(768)}, {"v", floats(768)}};
  EXPECT_EQ(input_error("run_paged_plan", plan(one)), "");
  json three = {
      {"op", "append"}, {"sequence", 0}, {"n", 3}, {"k", floats(3 * 768)}, {"v", floats(3 * 768)}};
  EXPECT_EQ(input_error("run_paged_plan", plan(three)), "");
  three["v"] = floats(768);
  EXPECT_TRUE(has(input_error("run_paged_plan", plan(three)),
                  "input.plan[1].v: must hold 3 x 768 floats (n = 3), not 768"));
  json zero = one;
  zero["n"] = 0;
  EXPECT_TRUE(has(input_error("run_paged_plan", plan(zero)),
                  "input.plan[1].n: must be a whole number from 1 to 65536, not 0"));
}

// The runner checks a request's input by the same spec, before the binding reads it: the
// same words name the same field.
TEST(inputs, a_runner_refuses_a_bad_input_in_the_words_of_the_fixture_check) {
  const json input = {{"plan", json::array({{{"op", "create"}},
                                            {{"op", "append"}, {"cache", 0}, {"k", floats(5)}, {"v", floats(768)}}})}};
  const std::string fixture_error = input_error("run_cache_plan", input);
  ASSERT_TRUE(has(fixture_error, "input.plan[1].k: must hold 768 floats, not 5")) << fixture_error;
  try {
    adapter_table().at("run_cache_plan")(input);
    ADD_FAILURE() << "the binding took an input its spec refuses";
  } catch (const BadInput& e) {
    EXPECT_EQ("fixtures/x/01-case.json: " + std::string(e.what()), fixture_error);
  }
}

TEST(inputs, a_setup_a_runner_cannot_prepare_is_named) {
  EXPECT_EQ(setup_problem(json::object()), "");
  EXPECT_EQ(setup_problem({{"weights", weights()}}), "");
  EXPECT_TRUE(has(setup_problem({{"weight", weights()}}), "\"weight\" is nothing a runner prepares"));
  EXPECT_TRUE(has(setup_problem({{"weights", {{"seed", 1}}}}), "weights: has no \"kind\""));
  EXPECT_EQ(setup_problem(json::array()), "must be an object");
}

// The output half of the spec: the form a binding answers, which every fixture's expected
// output and every answer read by the grader must have.
namespace {

// The FixtureError of checking a fixture of `adapter` expecting `expected`, or "".
std::string output_error(const std::string& adapter, const json& expected) {
  Fixture f = fixture_with(adapter, json::object());
  f.expected = expected;
  try {
    check_case_output(f);
  } catch (const FixtureError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(outputs, every_adapter_states_its_output_form) {
  for (const StageSpecs& stage : stage_specs())
    for (const AdapterSpec& spec : stage.specs()) EXPECT_NE(spec.check_output, nullptr) << spec.name;
}

TEST(outputs, the_reference_answers_of_every_committed_case_have_their_adapters_forms) {
  // What the reference's bindings answer, before the generator digests anything.
  for (const Stage& stage : stage_table())
    for (const Fixture& f : load_stage_fixtures(source_dir() / "fixtures" / stage.slug, stage.slug, "")) {
      if (f.input.contains("weights")) continue;  // the GPT-2 cases: course_test runs them
      json answer;
      try {
        answer = adapter_table().at(f.adapter)(f.input);
      } catch (const std::exception&) {
        continue;  // a case whose point is a throw answers {"error"} through the generator
      }
      EXPECT_NO_THROW(check_adapter_output(f.adapter, answer)) << f.file;
    }
}

TEST(outputs, a_fixture_whose_expected_output_lacks_a_field_is_named) {
  const json rows = json::array({json::array({12, 1, 64})});
  EXPECT_EQ(output_error("run_model_cache_clone", {{"original", rows}}),
            "fixtures/x/01-case.json: the expected output: has no \"clone\" (adapter run_model_cache_clone)");
  EXPECT_EQ(output_error("run_model_cache_clone", {{"original", rows}, {"clone", json::array({json::array({12, 1})})}}),
            "fixtures/x/01-case.json: the expected output.clone[0]: must be a shape row [n_heads, length, "
            "head_dim], not [12, 1] (adapter run_model_cache_clone)");
  EXPECT_TRUE(has(output_error("run_cache_plan", {{"caches", json::array({{{"shape", {12, 0, 64}}, {"keys", 3}}})}}),
                  "output.caches[0].keys: must be a tensor, not 3"));
  EXPECT_EQ(output_error("run_cache_plan", {{"error", "std::out_of_range"}}), "");
  EXPECT_EQ(output_error("run_model_cache_clone", {{"original", rows}, {"clone", rows}}), "");
}

TEST(outputs, an_answer_not_of_its_adapters_form_is_said_so_and_not_read_further) {
  Fixture f = fixture_with("run_model_cache_shapes", {{"appends", {0}}});
  f.expected = {{"rows", json::array({json::array({12, 1, 64})})}};
  const AnswerEvidence e = failed_answer_evidence(f, {{"rows", "twelve"}});
  ASSERT_EQ(e.where.size(), 1u);
  EXPECT_EQ(e.where[0],
            "The answer is not of the form its adapter answers: output.rows: must be a list of shape rows, not "
            "\"twelve\" (adapter run_model_cache_shapes). Nothing more is read from it.");
}
