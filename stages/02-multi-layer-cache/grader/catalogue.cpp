// The known mistakes of stage multi-layer-cache: its entries of the catalogue
// (judge/catalogue.hpp), each proved by the .mistake file of the same id in this folder's
// mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_multi_layer_cache {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"kvc.shared_layers", "layers share one cache",
       "ModelCache() makes one KVCache and points all twelve layers at it", "mistake-layers-sharing-one-cache", 1},
      {"kvc.length_counts_all_layers", "length counts every layer's appends",
       "length() reads a counter shared by every cache: the appends made anywhere so far",
       "mistake-a-length-that-counts-every-layer", 1},
      {"kvc.shallow_clone", "shallow clone",
       "the copy shares its twelve layers with the original: ModelCache::clone() copies the "
       "layer pointers, or the adapter copies the ModelCache (`ModelCache copy = original;`) "
       "instead of calling clone()", "mistake-shallow-clone", 1},
      {"kvc.clone_empty", "clone starts empty",
       "the copy starts empty: ModelCache::clone() returns a fresh ModelCache instead of a copy, "
       "or the adapter makes a new ModelCache instead of calling clone()", "mistake-a-clone-that-starts-empty", 2},
      {"kvc.clone_only_first_layer", "clone copies layer 0 only",
       "ModelCache::clone() clones layer 0 and leaves the copy's other layers empty", "mistake-a-partial-or-reordered-clone", 2},
      {"kvc.clone_layers_reversed", "clone reverses the layers",
       "ModelCache::clone() puts layer l's clone in slot 11 - l", "mistake-a-partial-or-reordered-clone", 2},
      {"kvc.shape_row_field_order", "shape rows with fields out of order",
       "the adapter's shape rows are {length, 12, 64} instead of {12, length, 64}", "mistake-shape-rows-out-of-order", 3},
      {"kvc.clone_appends_to_original", "the copy's appends go to the original",
       "the clone adapter appends `after_clone` to the original instead of the copy", "mistake-appends-sent-to-the-wrong-cache", 2},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_multi_layer_cache
