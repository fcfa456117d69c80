// Binding of stage sliding-window's adapter: a windowed cache driven through a list of
// operations. Like stages 9 and 13, it calls the learner's code (course/sliding_window.hpp)
// directly: no adapter to write.
//
// run_sliding_window
//   input   {"weights", "sink": S, "window": W, "past": L, "past_seed": seed,
//            "ops": [{"prefill": [ids]} | {"decode": id} | {"crop": n} | {"save": true}]}
//           The cache first gets L made-up positions (course/speed.hpp's fill_past), appended
//           position by position to every layer through WindowedLayer::append; then the ops
//           run in order. "save" keeps a clone of the cache as it is then.
//   output  {"steps": [one per op: {"total", "positions": layer 0's held positions,
//                      "logits": [vocab] (prefill, decode), or "refused": the exception's
//                      type when a prefill or decode threw std::length_error}],
//            "cache": the cache at the end, "saved": the last saved clone, read at the end,
//            after the ops that followed it (with a "save" op only); each cache as
//            {"cache_shapes", "keys", "values" ([12, 12, held, 64], axes layer, head, row,
//            dim: held row i is position positions[layer][i]), "totals": [12],
//            "positions": [12 lists]}}
#include "runner/bindings.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "course/sliding_window.hpp"
#include "course/speed.hpp"
#include "runner/weights.hpp"

namespace course::stage_sliding_window {

namespace {

constexpr int kMaxOps = 64;

// Layer l's held positions, in row order.
json held_positions(const WindowedLayer& layer) {
  json held = json::array();
  for (int i = 0; i < layer.length(); ++i) held.push_back(layer.position(i));
  return held;
}

json windowed_json(const WindowedCache& cache) {
  std::vector<const KVView*> layers;
  json totals = json::array(), positions = json::array();
  for (int l = 0; l < n_layers; ++l) {
    const WindowedLayer& layer = cache.layer(l);
    layers.push_back(&layer);
    totals.push_back(layer.total());
    positions.push_back(held_positions(layer));
  }
  json out = layers_json(layers);
  // The third axis counts held rows, not positions: "positions" says which each row is.
  for (const char* name : {"keys", "values"})
    if (out[name].contains("axes") && out[name]["axes"].size() == 4) out[name]["axes"][2] = "row";
  out["totals"] = std::move(totals);
  out["positions"] = std::move(positions);
  return out;
}

}  // namespace

void register_adapters(AdapterTable& table) {
  table["run_sliding_window"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int sink = int_field(input, "sink", 0, model.config().n_ctx - 1);
    const int window = int_field(input, "window", 1, model.config().n_ctx - sink);
    const int past = int_field(input, "past", 0, model.config().n_ctx - 1);
    const json& seed = field(input, "past_seed");
    if (!seed.is_number_unsigned())
      throw BadInput("\"past_seed\" must be a whole number, 0 or more");
    const json& ops = field(input, "ops");
    if (!ops.is_array() || ops.empty() || ops.size() > size_t(kMaxOps))
      throw BadInput("\"ops\" must be a list of 1 to " + std::to_string(kMaxOps) + " operations");
    WindowedCache cache(sink, window);
    fill_past(cache, past, seed.get<uint64_t>());  // through the learner's append
    std::optional<WindowedCache> saved;            // the last "save"'s clone
    json steps = json::array();
    for (const json& op : ops) {
      if (!op.is_object() || op.size() != 1)
        throw BadInput("each op must be an object of one member: prefill, decode, crop or save");
      json step;
      auto run_model = [&](auto&& call) {
        try {
          step["logits"] = logits_json(call(), 1, false);
        } catch (const std::length_error&) {
          step["refused"] = current_exception_type();
        }
      };
      if (op.contains("prefill")) {
        const std::vector<int> tokens = tokens_field(op, "prefill", model, false);
        run_model([&] { return windowed_prefill(model, cache, tokens); });
      } else if (op.contains("decode")) {
        const int token =
            tokens_field(json{{"decode", json::array({op["decode"]})}}, "decode", model, false)[0];
        run_model([&] { return windowed_decode_step(model, cache, token); });
      } else if (op.contains("crop")) {
        cache.crop(int_field(op, "crop", 0, model.config().n_ctx));
      } else if (op.contains("save") && op["save"] == true) {
        saved.emplace(cache.clone());
      } else {
        throw BadInput(
            "an op is {\"prefill\": [ids]}, {\"decode\": id}, {\"crop\": n} or {\"save\": true}, "
            "not " +
            op.dump());
      }
      step["total"] = cache.layer(0).total();
      step["positions"] = held_positions(cache.layer(0));
      steps.push_back(std::move(step));
    }
    json out = {{"steps", std::move(steps)}, {"cache", windowed_json(cache)}};
    if (saved) out["saved"] = windowed_json(*saved);
    return out;
  };
}

}  // namespace course::stage_sliding_window
