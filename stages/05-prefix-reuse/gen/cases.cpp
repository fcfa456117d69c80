// Cases of stage prefix-reuse: a saved prefix continued by suffixes, which the generator
// proves equal a fresh prefill of prefix + suffix.
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"
#include "wire/digest.hpp"

namespace course {

namespace {

Tensor tensor_of(const json& j) { return tensor_from_json(j); }

}  // namespace

CaseSpec reuse_case(std::string name, std::string checks, std::vector<int> prefix,
                    std::vector<std::vector<int>> suffixes) {
  json input = {{"weights", decode_weights_spec()}, {"prefix", prefix}, {"suffixes", suffixes}};
  auto finalize = [prefix, suffixes](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    int64_t new_positions = int64_t(prefix.size());
    for (const auto& s : suffixes) new_positions += int64_t(s.size());
    require_work(out["work"], new_positions);
    std::vector<float> fp = model.forward(prefix);
    require(same_bits(tensor_of(out["prefix_logits"]).data, fp.data() + fp.size() - vocab, vocab),
            "the saved prefix's logits equal Model::forward's");
    json expected = out;
    expected["prefix_logits"] = digest_logits(out["prefix_logits"]);
    expected["saved"] = digest_cache(out["saved"]);
    for (size_t i = 0; i < suffixes.size(); ++i) {
      std::vector<int> all = concat(prefix, suffixes[i]);
      json fresh = run_adapter("run_prefill", {{"weights", decode_weights_spec()},
                                               {"chunks", std::vector<std::vector<int>>{all}}});
      std::vector<float> f = model.forward(all);
      const json& c = out["continued"][i];
      require(same_bits(tensor_of(c["logits"]).data, f.data() + f.size() - vocab, vocab),
              "a continued prefix's logits equal Model::forward's of prefix + suffix");
      for (const char* name : {"logits", "keys", "values"}) {
        Tensor a = tensor_of(c[name]), b = tensor_of(fresh[name]);
        require(a.data.size() == b.data.size() && same_bits(a.data, b.data.data(), b.data.size()),
                std::string("a continued prefix's ") + name + " equal a fresh prefill's");
      }
      expected["continued"][i] = digest_cache(c);
    }
    expected["work"] = expected_work(out["work"]);
    return expected;
  };
  return {"prefix-reuse", std::move(name), std::move(checks), "run_prefix_reuse", input, finalize};
}

namespace stage_prefix_reuse {

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> prefix = {464, 2068, 7586, 21831, 18045, 625};
  cases.push_back(reuse_case("01-one-suffix-6-reused",
                             "A 6-token prefix saved once and continued by one token: 6 positions "
                             "reused instead of recomputed.",
                             prefix, {{262}}));
  cases.push_back(reuse_case("02-three-suffixes-18-reused",
                             "Three suffixes (1, 2 and 3 tokens) continue the same saved 6-token "
                             "prefix: 18 positions reused, and the saved cache never changes.",
                             prefix, {{262}, {262, 16931}, {617, 3290, 13}}));
  cases.push_back(reuse_case("03-same-suffix-twice-16-reused",
                             "The same suffix continued twice from one saved 8-token prefix gives "
                             "identical results: 16 positions reused.",
                             {464, 3290, 318, 257, 3290, 13, 383, 3290}, {{318, 922}, {318, 922}}));
  return cases;
}

}  // namespace stage_prefix_reuse

}  // namespace course
