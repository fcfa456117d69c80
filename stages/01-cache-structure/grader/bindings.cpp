// Bindings of stage cache-structure's adapters: one layer's KVCache driven by a plan
// (run_cache_plan) and read back directly (read_kvcache).
#include <string>

#include "runner/bindings.hpp"
#include "course/adapters.hpp"

namespace course {

namespace {

std::vector<float> float_row(const json& op, const char* name) {
  Tensor t = [&] {
    try {
      return tensor_from_json(field(op, name));
    } catch (const TensorError& e) {
      throw BadInput(std::string("\"") + name + "\": " + e.what());
    }
  }();
  if (t.data.size() != size_t(d_model))
    throw BadInput(std::string("\"") + name + "\" must hold " + std::to_string(d_model) + " floats");
  return t.data;
}

std::vector<CacheOp> parse_plan(const json& input) {
  const json& plan = field(input, "plan");
  if (!plan.is_array()) throw BadInput("\"plan\" is not a list");
  std::vector<CacheOp> ops;
  int n_caches = 0;
  for (const json& step : plan) {
    CacheOp op;
    std::string kind = field(step, "op").get<std::string>();
    if (kind == "create") {
      op.kind = CacheOp::Kind::create;
      ++n_caches;
    } else if (kind == "append" || kind == "clone") {
      op.kind = kind == "append" ? CacheOp::Kind::append : CacheOp::Kind::clone;
      op.cache = field(step, "cache").get<int>();
      if (op.cache < 0 || op.cache >= n_caches) throw BadInput("plan step names cache " + std::to_string(op.cache) + ", which does not exist yet");
      if (op.kind == CacheOp::Kind::append) {
        op.k = float_row(step, "k");
        op.v = float_row(step, "v");
      } else {
        ++n_caches;
      }
    } else if (kind == "crop") {
      op.kind = CacheOp::Kind::crop;
      op.cache = field(step, "cache").get<int>();
      if (op.cache < 0 || op.cache >= n_caches) throw BadInput("plan step names cache " + std::to_string(op.cache) + ", which does not exist yet");
      op.n = field(step, "n").get<int>();
    } else {
      throw BadInput("unknown plan step \"" + kind + "\"");
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

// What the grader reads of a cache: {"shape": [12, length, 64], "keys", "values"}, the
// tensors read through key(h, p) and value(h, p) in [12, length, 64] order (a flat
// "index" tensor when their size disagrees with the shape).
json snapshot_json(const CacheSnapshot& s) {
  json c;
  c["shape"] = {s.shape[0], s.shape[1], s.shape[2]};
  const int64_t len = s.shape[1];
  auto tensor = [&](const std::vector<float>& data) {
    Tensor t;
    t.axes = {"head", "pos", "dim"};
    if (int64_t(data.size()) == int64_t(n_heads) * len * head_dim && len >= 0) {
      t.shape = {n_heads, len, head_dim};
    } else {
      t.shape = {int64_t(data.size())};
      t.axes = {"index"};
    }
    t.data = data;
    return tensor_to_json(t, TensorEncoding::base64);
  };
  c["keys"] = tensor(s.keys);
  c["values"] = tensor(s.values);
  return c;
}

// The KVCache itself, without the learner's adapter: the rows of "keys" and "values"
// ([n, 768] each) appended in order, then length(), key(h, p) and value(h, p) read here.
json read_kvcache(const json& input) {
  KVCache cache = probe_cache(input);
  CacheSnapshot s;
  const int seq = cache.length();
  s.shape = {n_heads, seq, head_dim};
  for (int h = 0; h < n_heads; ++h)
    for (int p = 0; p < seq; ++p) {
      auto k = cache.key(h, p);
      auto v = cache.value(h, p);
      s.keys.insert(s.keys.end(), k.begin(), k.end());
      s.values.insert(s.values.end(), v.begin(), v.end());
    }
  return snapshot_json(s);
}

}  // namespace

namespace stage_cache_structure {

void register_adapters(AdapterTable& table) {
  table["run_cache_plan"] = [](const json& input) {
    std::vector<CacheSnapshot> snaps = run_cache_plan(parse_plan(input));
    json caches = json::array();
    for (const CacheSnapshot& s : snaps) caches.push_back(snapshot_json(s));
    return json{{"caches", caches}};
  };
  table["read_kvcache"] = read_kvcache;
}

}  // namespace stage_cache_structure

}  // namespace course
