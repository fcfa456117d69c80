// Bindings of stage prefill's adapters: the causal attention probe (attend_causal) and the
// prompt prefilled in chunks (run_prefill). Outputs as stage one-token's
// (stages/03-one-token/grader/bindings.cpp): logits [n_chunks, vocab], one row per chunk.
#include "runner/bindings.hpp"

#include "course/adapters.hpp"
#include "runner/weights.hpp"

namespace course::stage_prefill {

void register_adapters(AdapterTable& table) {
  table["attend_causal"] = [](const json& input) {
    KVCache cache = probe_cache(input);
    Tensor q = tensor_field(input, "q");
    if (q.shape.size() != 2 || q.shape[1] != d_model || q.shape[0] < 1 ||
        q.shape[0] > cache.length())
      throw BadInput("\"q\" must be [n_rows, 768] with 1 <= n_rows <= the cache's length");
    const int n_rows = int(q.shape[0]);
    std::vector<float> out = poisoned(size_t(n_rows) * d_model);  // [n_rows, n_heads, head_dim]
    attend_causal(q.data, n_rows, cache, out);
    return json{{"out", tensor_to_json(
                            make_tensor({n_rows, n_heads, head_dim}, {"row", "head", "dim"}, out),
                            TensorEncoding::base64)}};
  };
  table["run_prefill"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    std::vector<std::vector<int>> chunks = token_lists(input, "chunks", model);
    model.reset_work();
    CacheRun run = run_prefill(model, chunks);
    json out = cache_json(run.cache);
    out["logits"] = logits_json(run.logits, int64_t(chunks.size()), true, "chunk");
    out["work"] = work_json(model.work());
    return out;
  };
}

}  // namespace course::stage_prefill
