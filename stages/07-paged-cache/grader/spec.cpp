// The input forms of stage paged-cache's adapters (wire/adapter_spec.hpp): a plan over a
// pool of one-layer blocks (run_paged_plan), and a GPT-2 prompt with branches forked from
// it (run_paged_fork).
#include "wire/spec_checks.hpp"

namespace course::stage_paged_cache {

namespace {

using namespace spec;

void check_paged_plan(const json& input) {
  whole(field(input, "input", "n_blocks"), "input.n_blocks", 1, kMaxPlanBlocks);
  const json& plan = field(input, "input", "plan");
  if (!plan.is_array()) bad("input.plan", "must be a list of steps");
  int64_t n_sequences = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string where = at("input.plan", i);
    const json& op = field(plan[i], where, "op");
    if (op == "create") {
      ++n_sequences;
      continue;
    }
    if (op != "append" && op != "fork" && op != "release")
      bad(at(where, "op"),
          "must be \"create\", \"append\", \"fork\" or \"release\", not " + json_excerpt(op, 40));
    if (n_sequences == 0) bad(where, "names a sequence before any was created");
    whole(field(plan[i], where, "sequence"), at(where, "sequence"), 0, n_sequences - 1);
    if (op == "fork") ++n_sequences;
    if (op != "append") continue;
    // An append of n positions (one grow(n)) carries n rows; "n" left out is 1.
    int64_t n = 1;
    if (plan[i].contains("n")) {
      whole(plan[i]["n"], at(where, "n"), 1, int64_t(kMaxPlanBlocks) * 16);  // 16 positions a block
      n = plan[i]["n"].get<int64_t>();
    }
    for (const char* name : {"k", "v"}) {
      const Tensor t = tensor_at(field(plan[i], where, name), at(where, name));
      if (n == 1) {
        model_dim_floats(t, at(where, name));
      } else if (t.data.size() != size_t(n) * size_t(kInputModelDim)) {
        bad(at(where, name),
            "must hold " + std::to_string(n) + " x " + std::to_string(kInputModelDim) +
                " floats (n = " + std::to_string(n) + "), not " + std::to_string(t.data.size()));
      }
    }
  }
}

void check_paged_fork(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  check_tokens(input, "prompt", "input");
  check_token_lists(input, "branches");
}

// Each sequence's table, length and rows; the pool's free blocks, reference counts and the
// appends refused for want of blocks.
void plan_output(const json& output) {
  list_member(output, "output", "sequences", [](const json& seq, const std::string& where) {
    int_list_member(seq, where, "block_table");
    int_member(seq, where, "length");
    tensor_member(seq, where, "keys");
    tensor_member(seq, where, "values");
  });
  int_list_member(output, "output", "exhausted");
  int_member(output, "output", "free_blocks");
  int_list_member(output, "output", "ref_counts");
}

// The prompt's logits; each branch's table, length, cache and logits; the pool.
void fork_output(const json& output) {
  tensor_member(output, "output", "prompt_logits");
  list_member(output, "output", "branches", [](const json& branch, const std::string& where) {
    int_list_member(branch, where, "block_table");
    int_member(branch, where, "length");
    cache_members(branch, where);
    tensor_member(branch, where, "logits");
  });
  int_member(output, "output", "free_blocks");
  int_list_member(output, "output", "ref_counts");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_paged_plan", check_paged_plan, plan_output},
      {"run_paged_fork", check_paged_fork, fork_output},
  };
  return specs;
}

}  // namespace course::stage_paged_cache
