// The input forms of stage multi-layer-cache's adapters (wire/adapter_spec.hpp): lists of
// layer indices, one append to that layer each.
#include "wire/spec_checks.hpp"

namespace course::stage_multi_layer_cache {

namespace {

using namespace spec;

void check_layers(const json& input, const char* name) {
  whole_list(field(input, "input", name), at("input", name), 0, kInputLayers - 1, 0);
}

// Shape rows [12, length, 64], one per layer.
void shapes_output(const json& output) { shape_rows_member(output, "output", "rows"); }

void clone_output(const json& output) {
  shape_rows_member(output, "output", "original");
  shape_rows_member(output, "output", "clone");
}

}  // namespace

const std::vector<AdapterSpec>& adapter_specs() {
  static const std::vector<AdapterSpec> specs = {
      {"run_model_cache_shapes", [](const json& input) { check_layers(input, "appends"); },
       shapes_output},
      {"run_model_cache_clone",
       [](const json& input) {
         for (const char* name : {"before", "after_original", "after_clone"})
           check_layers(input, name);
       },
       clone_output},
  };
  return specs;
}

}  // namespace course::stage_multi_layer_cache
