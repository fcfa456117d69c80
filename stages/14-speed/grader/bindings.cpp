// Bindings for stage speed: greedy generation after a made-up past.
//
// run_speed
//   input   {"weights", "past": L, "past_seed": S, "prompt": [ids], "max_new_tokens": N,
//            "timed": true (optional: the grader times the case; the runner ignores it)}
//   output  {"tokens": [N ids], "logits": [N, vocab], "cache_lengths": [12 lengths],
//            "cache_shapes", "keys", "values": the positions after the past only,
//            "work"}
// The past itself is not sent back: L positions of 12 layers are 72 KB each, and every
// one of them is the given fill_past's; what the learner's code wrote is after them.
#include <algorithm>
#include <string>

#include "course/adapters.hpp"
#include "runner/bindings.hpp"
#include "runner/weights.hpp"
#include "wire/limits.hpp"

namespace course::stage_speed {

namespace {

// One layer of a cache from position `first` on: what the learner's code appended after
// the past.
class Tail : public KVView {
 public:
  Tail(const KVCache& layer, int first) : layer_(&layer), first_(first) {}
  int length() const override { return std::max(0, layer_->length() - first_); }
  std::span<const float> key(int head, int pos) const override { return layer_->key(head, first_ + pos); }
  std::span<const float> value(int head, int pos) const override {
    return layer_->value(head, first_ + pos);
  }

 private:
  const KVCache* layer_;
  int first_;
};

}  // namespace

void register_adapters(AdapterTable& table) {
  table["run_speed"] = [](const json& input) {
    const gpt2::Model& model = model_for(field(input, "weights"));
    const int past = int_field(input, "past", 0, kMaxSpeedPast);
    const json& seed = field(input, "past_seed");
    if (!seed.is_number_unsigned()) throw BadInput("\"past_seed\" must be a whole number, 0 or more");
    const std::vector<int> prompt = tokens_field(input, "prompt", model, false);
    const int n = int_field(input, "max_new_tokens", 1, kMaxNewTokens);
    if (int64_t(past) + int64_t(prompt.size()) + n - 1 > model.config().n_ctx)
      throw BadInput("the past, the prompt and the new tokens do not fit in the model's " +
                     std::to_string(model.config().n_ctx) + " positions");
    model.reset_work();
    const GenerateRun run = run_speed(model, past, seed.get<uint64_t>(), prompt, n);
    const gpt2::WorkCounts work = model.work();
    std::vector<int> lengths;
    std::vector<Tail> tails;
    for (int l = 0; l < n_layers; ++l) {
      lengths.push_back(run.cache.layer(l).length());
      tails.emplace_back(run.cache.layer(l), past);
    }
    std::vector<const KVView*> views;
    for (const Tail& t : tails) views.push_back(&t);
    json out = layers_json(views);
    out["tokens"] = run.generated.tokens;
    out["logits"] = logits_json(run.generated.logits, n, true, "step");
    out["cache_lengths"] = lengths;
    out["work"] = work_json(work);
    return out;
  };
}

}  // namespace course::stage_speed
