// Bindings for stage paged-cache.
//
// run_paged_plan
//   input   {"n_blocks": N, "plan": [{"op": "create"} | {"op": "append", "sequence": i,
//            "k": [768], "v": [768]} | {"op": "append", "sequence": i, "n": n,
//            "k": [n, 768], "v": [n, 768]} | {"op": "fork", "sequence": i} |
//            {"op": "release", "sequence": i}]}   ("n" left out: 1)
//   output  {"sequences": [{"length", "block_table", "keys": [12, length, 64],
//            "values": [12, length, 64]}], "ref_counts": [N], "free_blocks", "exhausted"}
// run_paged_fork
//   input   {"weights", "n_blocks": N, "prompt": [ids], "branches": [[ids], ...]}
//   output  {"prompt_logits": [vocab], "branches": [{"length", "block_table",
//            "logits": [n_steps, vocab], "cache_shapes", "keys", "values"}],
//            "ref_counts": [N], "free_blocks"}
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course {

namespace {

// Pools are sized by the fixture; wire/limits.hpp keeps a broken one from asking for gigabytes.

int blocks_field(const json& input, int most) {
  const json& n = field(input, "n_blocks");
  if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > most)
    throw BadInput("\"n_blocks\" must be a whole number from 1 to " + std::to_string(most));
  return n.get<int>();
}

// `rows` rows of 768 floats.
std::vector<float> row_field(const json& step, const char* name, int rows) {
  Tensor t;
  try {
    t = tensor_from_json(field(step, name));
  } catch (const TensorError& e) {
    throw BadInput(std::string("\"") + name + "\": " + e.what());
  }
  if (t.data.size() != size_t(rows) * size_t(d_model))
    throw BadInput(std::string("\"") + name + "\" must hold " + std::to_string(rows) +
                   " x 768 floats");
  return t.data;
}

std::vector<PagedOp> plan_field(const json& input) {
  const json& plan = field(input, "plan");
  if (!plan.is_array()) throw BadInput("\"plan\" is not a list");
  std::vector<PagedOp> ops;
  int n_sequences = 0;
  for (const json& step : plan) {
    PagedOp op;
    const json& kind = field(step, "op");
    const std::string k = kind.is_string() ? kind.get<std::string>() : "";
    if (k == "create") {
      op.kind = PagedOp::Kind::create;
      ++n_sequences;
      ops.push_back(std::move(op));
      continue;
    }
    if (k == "append") op.kind = PagedOp::Kind::append;
    else if (k == "fork") op.kind = PagedOp::Kind::fork;
    else if (k == "release") op.kind = PagedOp::Kind::release;
    else throw BadInput("unknown plan step " + kind.dump());
    const json& seq = field(step, "sequence");
    if (!seq.is_number_integer() || seq.get<int64_t>() < 0 || seq.get<int64_t>() >= n_sequences)
      throw BadInput("plan step names sequence " + seq.dump() + ", which does not exist yet");
    op.sequence = seq.get<int>();
    if (op.kind == PagedOp::Kind::append) {
      if (step.contains("n")) {
        const json& n = step["n"];
        if (!n.is_number_integer() || n.get<int64_t>() < 1 ||
            n.get<int64_t>() > kMaxPlanBlocks * block_size)
          throw BadInput("an append's \"n\" must be a whole number from 1 to " +
                         std::to_string(kMaxPlanBlocks * block_size));
        op.n = n.get<int>();
      }
      op.k = row_field(step, "k", op.n);
      op.v = row_field(step, "v", op.n);
    }
    if (op.kind == PagedOp::Kind::fork) ++n_sequences;
    ops.push_back(std::move(op));
  }
  return ops;
}

json head_major(const std::vector<float>& data, int length) {
  // [12, length, 64] when the size agrees; otherwise flat, and the grader reports the shape.
  Tensor t = int64_t(data.size()) == int64_t(n_heads) * length * head_dim
                 ? make_tensor({n_heads, length, head_dim}, {"head", "pos", "dim"}, data)
                 : make_tensor({int64_t(data.size())}, {"index"}, data);
  return tensor_to_json(t, TensorEncoding::base64);
}

json pool_json(const BlockPool& pool, json out) {
  json counts = json::array();
  for (int b = 0; b < pool.n_blocks(); ++b) counts.push_back(pool.ref_count(b));
  out["ref_counts"] = counts;
  out["free_blocks"] = pool.free_blocks();
  return out;
}

}  // namespace

namespace stage_paged_cache {

void register_adapters(AdapterTable& table) {
  table["run_paged_plan"] = [](const json& input) {
    PagedPlanResult r = run_paged_plan(blocks_field(input, kMaxPlanBlocks), plan_field(input));
    json sequences = json::array();
    for (const PagedSnapshot& s : r.sequences)
      sequences.push_back({{"length", s.length},
                           {"block_table", s.block_table},
                           {"keys", head_major(s.keys, s.length)},
                           {"values", head_major(s.values, s.length)}});
    json counts = json::array();
    for (int c : r.ref_counts) counts.push_back(c);
    return json{{"sequences", sequences},
                {"ref_counts", counts},
                {"free_blocks", r.free_blocks},
                {"exhausted", r.exhausted}};
  };
  table["run_paged_fork"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int n_blocks = blocks_field(input, kMaxModelBlocks);
    std::vector<int> prompt = tokens_field(input, "prompt", model, false);
    const json& list = field(input, "branches");
    if (!list.is_array() || list.empty()) throw BadInput("\"branches\" must be a non-empty list");
    std::vector<std::vector<int>> branches;
    for (const json& b : list) branches.push_back(tokens_field(json{{"branch", b}}, "branch", model, false));
    PagedForkRun run = run_paged_fork(model, n_blocks, prompt, branches);
    if (!run.pool) throw std::logic_error("run_paged_fork returned no pool");
    json out = {{"prompt_logits", logits_json(run.prompt_logits, 1, false)}};
    json list_out = json::array();
    for (size_t i = 0; i < run.branches.size(); ++i) {
      const PagedSequence& seq = run.branches[i];
      std::vector<PagedLayer> views;
      for (int l = 0; l < n_layers; ++l) views.emplace_back(seq, l);
      std::vector<const KVView*> layers;
      for (const PagedLayer& v : views) layers.push_back(&v);
      json b = layers_json(layers);
      b["length"] = seq.length();
      b["block_table"] = seq.block_table();
      const int64_t steps = i < branches.size() ? int64_t(branches[i].size()) : 0;
      b["logits"] = logits_json(i < run.logits.size() ? run.logits[i] : std::vector<float>{}, steps, true);
      list_out.push_back(std::move(b));
    }
    out["branches"] = list_out;
    return pool_json(*run.pool, out);
  };
}

}  // namespace stage_paged_cache

}  // namespace course
