// Cases of stage sliding-window, on GPT-2 small: windowed caches of a few sinks and a short
// window, so that a handful of tokens evicts rows; prefills longer than the window and onto
// a full cache; crops inside the window, across its start and into the sinks; a clone kept
// while the original goes on; and a made-up past that brings the cache to GPT-2's last
// position.
//
// The generator proves while it writes them (window_case) that a prefill gives the bits of
// decoding its tokens one at a time, and that with nothing evicted the numbers are those of
// the model without a cache.
#include "course/sliding_window.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "runner/weights.hpp"
#include "window_cases.hpp"

namespace course::stage_sliding_window {

namespace {

// Turns every prefill of `ops` that `steps` did not record as refused into one decode op
// per token; returns the new ops and, for each old op, the index of its last new op.
std::pair<json, std::vector<size_t>> by_decode_steps(const json& ops, const json& steps) {
  json out = json::array();
  std::vector<size_t> last;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].contains("prefill") && !steps[i].contains("refused"))
      for (const json& token : ops[i]["prefill"]) out.push_back(decode_op(token.get<int>()));
    else
      out.push_back(ops[i]);
    last.push_back(out.size() - 1);
  }
  return {out, last};
}

void require_same_window_cache(const json& a, const json& b, const std::string& what) {
  require(a["cache_shapes"] == b["cache_shapes"] && a["totals"] == b["totals"] &&
              a["positions"] == b["positions"],
          what + ": held positions and totals");
  for (const char* name : {"keys", "values"}) {
    const Tensor x = tensor_from_json(a[name]), y = tensor_from_json(b[name]);
    require(x.shape == y.shape && same_bits(x.data, y.data.data(), y.data.size()),
            what + ": " + name);
  }
}

json digest_window_cache(json cache) { return digest_cache(std::move(cache)); }

}  // namespace

json prefill_op(std::vector<int> tokens) { return {{"prefill", tokens}}; }
json decode_op(int token) { return {{"decode", token}}; }
json crop_op(int n) { return {{"crop", n}}; }
json save_op() { return {{"save", true}}; }

CaseSpec window_case(std::string name, std::string checks, int sink, int window, int past,
                     uint64_t past_seed, json ops) {
  json input = {
      {"weights", decode_weights_spec()}, {"sink", sink}, {"window", window}, {"past", past},
      {"past_seed", past_seed},           {"ops", ops}};
  auto finalize = [input](const json& out) {
    const json& steps = out.at("steps");
    // A prefill is decoding its tokens one at a time, bit for bit.
    const auto [decoded_ops, last] = by_decode_steps(input["ops"], steps);
    json by_steps = input;
    by_steps["ops"] = decoded_ops;
    const json other = run_adapter("run_sliding_window", by_steps);
    for (size_t i = 0; i < steps.size(); ++i) {
      const json& a = steps[i];
      const json& b = other["steps"][last[i]];
      require(a["total"] == b["total"] && a["positions"] == b["positions"],
              "op " + std::to_string(i) + " holds what decoding token by token holds");
      require(a.contains("logits") == b.contains("logits"),
              "op " + std::to_string(i) + " has logits both ways");
      if (a.contains("logits")) {
        const Tensor x = tensor_from_json(a["logits"]), y = tensor_from_json(b["logits"]);
        require(same_bits(x.data, y.data.data(), y.data.size()),
                "op " + std::to_string(i) + "'s logits are those of decoding token by token");
      }
    }
    require_same_window_cache(out["cache"], other["cache"],
                              "the cache at the end, decoded token by token");
    require(out.contains("saved") == other.contains("saved"), "a clone is saved both ways");
    if (out.contains("saved"))
      require_same_window_cache(out["saved"], other["saved"],
                                "the saved clone, decoded token by token");
    // While nothing was evicted or cropped, after no past: the model without a cache.
    if (input["past"] == 0) {
      const gpt2::Model& model = model_for(decode_weights_spec());
      const size_t vocab = size_t(model.config().vocab);
      const int held_most = input["sink"].get<int>() + input["window"].get<int>();
      std::vector<int> seq;
      for (size_t i = 0; i < steps.size(); ++i) {
        const json& op = input["ops"][i];
        if (op.contains("crop") || steps[i].contains("refused")) break;
        if (op.contains("prefill"))
          for (const json& t : op["prefill"]) seq.push_back(t.get<int>());
        if (op.contains("decode")) seq.push_back(op["decode"].get<int>());
        if (int(seq.size()) > held_most) break;
        if (!steps[i].contains("logits")) continue;
        const std::vector<float> forward = model.forward(seq);  // [seq, vocab]
        const Tensor x = tensor_from_json(steps[i]["logits"]);
        require(same_bits(x.data, forward.data() + (seq.size() - 1) * vocab, vocab),
                "op " + std::to_string(i) +
                    "'s logits equal Model::forward's while nothing is evicted");
      }
    }
    json expected = out;
    for (json& step : expected["steps"])
      if (step.contains("logits")) step["logits"] = digest_logits(step["logits"]);
    expected["cache"] = digest_window_cache(out["cache"]);
    if (out.contains("saved")) expected["saved"] = digest_window_cache(out["saved"]);
    return expected;
  };
  return {"sliding-window",     std::move(name), std::move(checks),
          "run_sliding_window", input,           finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(51, 40), b = words(52, 40);
  cases.push_back(window_case(
      "01-nothing-evicted",
      "Sinks 4 and a window of 16: a prompt of 8 tokens and 3 decode steps evict nothing, and the "
      "numbers are those of the model without a cache.",
      4, 16, 0, 0,
      json::array(
          {prefill_op(slice(a, 0, 8)), decode_op(a[8]), decode_op(a[9]), decode_op(a[10])})));
  json ops02 = json::array({prefill_op(slice(a, 0, 3))});
  for (int i = 3; i < 9; ++i) ops02.push_back(decode_op(a[size_t(i)]));
  cases.push_back(window_case(
      "02-decode-past-the-window",
      "Sinks 2 and a window of 4: after a prompt of 3, six decode steps; from position 6 on each "
      "step "
      "evicts the oldest position that is not a sink, and the next token still goes at the total.",
      2, 4, 0, 0, ops02));
  cases.push_back(window_case(
      "03-prompt-longer-than-the-window",
      "Sinks 2 and a window of 5: a prompt of 12 tokens at once, each row seeing the sinks and the "
      "5 "
      "positions up to its own, as if decoded one by one; then 2 decode steps.",
      2, 5, 0, 0, json::array({prefill_op(slice(a, 0, 12)), decode_op(a[12]), decode_op(a[13])})));
  cases.push_back(window_case(
      "04-prefill-onto-a-full-cache",
      "Sinks 2 and a window of 4: a prompt of 6, then a second prompt of 3 whose rows see only the "
      "held rows still inside their own windows; then a decode step.",
      2, 4, 0, 0,
      json::array({prefill_op(slice(b, 0, 6)), prefill_op(slice(b, 6, 9)), decode_op(b[9])})));
  json ops05 = json::array({prefill_op(slice(b, 0, 10))});
  for (int i = 10; i < 13; ++i) ops05.push_back(decode_op(b[size_t(i)]));
  cases.push_back(window_case(
      "05-no-sinks",
      "No sinks and a window of 6: a plain sliding window, a prompt of 10 and 3 decode steps.", 0,
      6, 0, 0, ops05));
  cases.push_back(
      window_case("06-rollback-inside-the-window",
                  "Sinks 2 and a window of 6: 12 positions, crop(10) drops positions 10 and 11 "
                  "from the window, "
                  "and two decode steps put new tokens there.",
                  2, 6, 0, 0,
                  json::array({prefill_op(slice(a, 0, 10)), decode_op(a[10]), decode_op(a[11]),
                               crop_op(10), decode_op(b[0]), decode_op(b[1])})));
  cases.push_back(window_case(
      "07-rollback-across-the-window",
      "Sinks 2 and a window of 4: 10 positions hold 0, 1, 6 .. 9; crop(5) leaves the sinks alone "
      "(positions 2 .. 5 were evicted and do not come back), and three decode steps refill the "
      "window "
      "from position 5.",
      2, 4, 0, 0,
      json::array({prefill_op(slice(a, 0, 10)), crop_op(5), decode_op(b[2]), decode_op(b[3]),
                   decode_op(b[4])})));
  cases.push_back(window_case(
      "08-rollback-into-the-sinks",
      "Sinks 3 and a window of 3: 8 positions, crop(1) keeps position 0 alone, and a prompt of 4 "
      "appends positions 1 .. 4, two of them sinks again.",
      3, 3, 0, 0,
      json::array({prefill_op(slice(b, 10, 18)), crop_op(1), prefill_op(slice(a, 20, 24))})));
  cases.push_back(window_case("09-a-clone-kept",
                              "Sinks 1 and a window of 4: a clone saved after 7 positions keeps "
                              "its rows and total while the "
                              "original decodes 3 more tokens and is cropped to 6.",
                              1, 4, 0, 0,
                              json::array({prefill_op(slice(a, 0, 7)), save_op(), decode_op(a[7]),
                                           decode_op(a[8]), decode_op(a[9]), crop_op(6)})));
  cases.push_back(window_case(
      "10-the-last-position",
      "Sinks 4 and a window of 8 after a made-up past of 1017 positions: a prompt of 4 takes "
      "positions 1017 .. 1020, decode steps reach 1023, the next decode is refused with "
      "std::length_error and changes nothing, and after crop(1022) one more step fits.",
      4, 8, 1017, 15,
      json::array({prefill_op(slice(b, 20, 24)), decode_op(b[24]), decode_op(b[25]),
                   decode_op(b[26]), decode_op(b[27]), crop_op(1022), decode_op(b[28])})));
  cases.push_back(window_case(
      "11-a-prompt-that-does-not-fit",
      "Sinks 2 and a window of 6 after a made-up past of 1020 positions: a prompt of 5 would end "
      "at position 1024 and is refused with std::length_error, changing nothing; a prompt of 4 "
      "fits.",
      2, 6, 1020, 16, json::array({prefill_op(slice(a, 30, 35)), prefill_op(slice(a, 30, 34))})));
  return cases;
}

}  // namespace course::stage_sliding_window
