// The input and output forms of stage prefix-hash's adapter (wire/adapter_spec.hpp):
// prompts served through a prefix cache whose keys keep `bits` bits.
#include "wire/limits.hpp"
#include "wire/spec_checks.hpp"

namespace course::stage_prefix_hash {

namespace {

using namespace spec;

void check_prefix_hash(const json& input) {
  check_input_weights(input);
  check_model_blocks(input);
  whole(field(input, "input", "bits"), "input.bits", 1, 64);
  check_token_lists(input, "prompts");
  if (input["prompts"].size() > size_t(kMaxRequests))
    bad("input.prompts", "holds more than " + std::to_string(kMaxRequests) + " prompts");
}

// Per request the tokens served, its block table and its logits; the cache's entries and
// collision counts; the pool's reference counts and free blocks; the work.
void prefix_hash_output(const json& output) {
  list_member(output, "output", "requests", [](const json& r, const std::string& where) {
    int_member(r, where, "served");
    int_list_member(r, where, "table");
    tensor_member(r, where, "logits");
  });
  list_member(output, "output", "entries", [](const json& e, const std::string& where) {
    string_member(e, where, "key");
    for (const char* name : {"block", "parent", "depth"}) int_member(e, where, name);
  });
  int_member(output, "output", "lookup_collisions");
  int_member(output, "output", "insert_collisions");
  int_list_member(output, "output", "ref_counts");
  int_member(output, "output", "free_blocks");
  work_member(output, "output");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_prefix_hash", check_prefix_hash, prefix_hash_output}};
  return specs;
}

}  // namespace course::stage_prefix_hash
