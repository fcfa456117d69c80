// The input form of stage prefix-reuse's adapter (wire/adapter_spec.hpp): a prefix, then
// suffixes that each continue a clone of its cache.
#include "wire/spec_checks.hpp"

namespace course::stage_prefix_reuse {

namespace {

using namespace spec;

void check_prefix_reuse(const json& input) {
  check_input_weights(input);
  check_tokens(input, "prefix", "input");
  check_token_lists(input, "suffixes");
}

// The prefix's logits, the saved cache's shape rows after each continuation, the saved
// cache, each continuation's cache and logits, and the work.
void reuse_output(const json& output) {
  tensor_member(output, "output", "prefix_logits");
  list_member(output, "output", "saved_rows_after_each", shape_rows);
  object_member(output, "output", "saved", cache_members);
  list_member(output, "output", "continued", [](const json& c, const std::string& where) {
    cache_members(c, where);
    tensor_member(c, where, "logits");
  });
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_prefix_reuse", check_prefix_reuse, reuse_output}};
  return specs;
}

}  // namespace course::stage_prefix_reuse
