// The input and output forms of stage speed's adapter (wire/adapter_spec.hpp): a greedy
// generation after a made-up past (course/speed.hpp), timed by the grader when the case
// says "timed".
#include "wire/spec_checks.hpp"

namespace course::stage_speed {

namespace {

using namespace spec;

// The most positions a past may hold: course::kMaxSpeedPast (include/course/speed.hpp,
// which the grader does not include).
constexpr int kMaxPast = 960;

void check_speed(const json& input) {
  check_input_weights(input);
  whole(field(input, "input", "past"), "input.past", 0, kMaxPast);
  const json& seed = field(input, "input", "past_seed");
  if (!seed.is_number_unsigned()) bad("input.past_seed", "must be a whole number, 0 or more");
  check_tokens(input, "prompt", "input");
  check_new_tokens(input, input["past"].get<int64_t>() + int64_t(input["prompt"].size()));
  if (input.contains("timed") && !input["timed"].is_boolean())
    bad("input.timed", "must be true or false");
}

// The tokens, the logits of every step, each layer's length, the positions after the
// past (keys and values), the work.
void speed_output(const json& output) {
  int_list_member(output, "output", "tokens");
  tensor_member(output, "output", "logits");
  int_list_member(output, "output", "cache_lengths");
  cache_members(output, "output");
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {{"run_speed", check_speed, speed_output}};
  return specs;
}

}  // namespace course::stage_speed
