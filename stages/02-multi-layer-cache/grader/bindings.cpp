// Bindings of stage multi-layer-cache's adapters: the twelve layers' ModelCache
// (run_model_cache_shapes, run_model_cache_clone). Output: shape rows [12, length, 64], one
// per layer, layer 0 first.
#include "runner/bindings.hpp"

#include <string>

#include "course/adapters.hpp"

namespace course::stage_multi_layer_cache {

namespace {

json shape_rows_json(const std::vector<ShapeRow>& rows) {
  json out = json::array();
  for (const ShapeRow& r : rows) out.push_back({r[0], r[1], r[2]});
  return out;
}

std::vector<int> layer_list(const json& input, const char* name) {
  std::vector<int> layers = int_list(field(input, name), name);
  for (int l : layers)
    if (l < 0 || l >= n_layers)
      throw BadInput(std::string("\"") + name + "\" names layer " + std::to_string(l));
  return layers;
}

}  // namespace

void register_adapters(AdapterTable& table) {
  table["run_model_cache_shapes"] = [](const json& input) {
    return json{{"rows", shape_rows_json(run_model_cache_shapes(layer_list(input, "appends")))}};
  };
  table["run_model_cache_clone"] = [](const json& input) {
    CloneShapes r =
        run_model_cache_clone(layer_list(input, "before"), layer_list(input, "after_original"),
                              layer_list(input, "after_clone"));
    return json{{"original", shape_rows_json(r.original)}, {"clone", shape_rows_json(r.clone)}};
  };
}

}  // namespace course::stage_multi_layer_cache
