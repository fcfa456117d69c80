// The input and output forms of stage sliding-window's adapter (wire/adapter_spec.hpp): a
// windowed cache's sizes, a made-up past, and the operations run on it.
#include <limits>

#include "wire/spec_checks.hpp"

namespace course::stage_sliding_window {

namespace {

using namespace spec;

constexpr int64_t kMaxOps = 64;  // as the binding reads them

void check_op(const json& op, const std::string& where) {
  if (!op.is_object() || op.size() != 1)
    bad(where,
        "must be one of {\"prefill\": [ids]}, {\"decode\": id}, {\"crop\": n}, {\"save\": true}");
  if (op.contains("prefill")) {
    whole_list(op["prefill"], at(where, "prefill"), 0, kInputVocab - 1, 1);
    if (op["prefill"].size() > size_t(kInputContext))
      bad(at(where, "prefill"), "holds more tokens than GPT-2 has positions");
  } else if (op.contains("decode")) {
    whole(op["decode"], at(where, "decode"), 0, kInputVocab - 1);
  } else if (op.contains("crop")) {
    whole(op["crop"], at(where, "crop"), 0, kInputContext);
  } else if (!(op.contains("save") && op["save"] == true)) {
    bad(where,
        "must be one of {\"prefill\": [ids]}, {\"decode\": id}, {\"crop\": n}, {\"save\": true}");
  }
}

void check_sliding_window(const json& input) {
  check_input_weights(input);
  whole(field(input, "input", "sink"), "input.sink", 0, kInputContext - 1);
  const int64_t sink = input["sink"].get<int64_t>();
  whole(field(input, "input", "window"), "input.window", 1, kInputContext - sink);
  whole(field(input, "input", "past"), "input.past", 0, kInputContext - 1);
  const json& seed = field(input, "input", "past_seed");
  if (!seed.is_number_unsigned()) bad("input.past_seed", "must be a whole number, 0 or more");
  const json& ops = field(input, "input", "ops");
  if (!ops.is_array() || ops.empty() || int64_t(ops.size()) > kMaxOps)
    bad("input.ops", "must be a list of 1 to " + std::to_string(kMaxOps) + " operations");
  for (size_t i = 0; i < ops.size(); ++i) check_op(ops[i], at("input.ops", i));
}

void step_members(const json& step, const std::string& where) {
  int_member(step, where, "total");
  int_list_member(step, where, "positions");
  if (step.is_object() && step.contains("logits")) tensor_member(step, where, "logits");
  if (step.is_object() && step.contains("refused")) string_member(step, where, "refused");
}

void windowed_cache_members(const json& cache, const std::string& where) {
  cache_members(cache, where);
  int_list_member(cache, where, "totals");
  // Any whole numbers: code that does not refuse position 1024 holds it, and the comparison
  // says so.
  list_member(cache, where, "positions", [](const json& held, const std::string& at_held) {
    whole_list(held, at_held, 0, std::numeric_limits<int32_t>::max(), 0);
  });
}

// Per op the cache's total and layer 0's held positions, with the logits of a prefill or
// decode; the cache at the end, and the saved clone when an op saved one.
void sliding_window_output(const json& output) {
  list_member(output, "output", "steps", step_members);
  object_member(output, "output", "cache", windowed_cache_members);
  if (output.is_object() && output.contains("saved"))
    object_member(output, "output", "saved", windowed_cache_members);
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_sliding_window", check_sliding_window, sliding_window_output}};
  return specs;
}

}  // namespace course::stage_sliding_window
