// What the grader knows of stage prefix-hash's adapter beyond its input form
// (judge/adapter_rules.hpp): a localizer that walks the requests in order (tokens served,
// blocks, logits), then the cache's entries and the two collision counts, and names the
// first that differs; the work is one row per prompt token not served from the cache.
#include <optional>

#include "judge/adapter_rules.hpp"
#include "judge/localize.hpp"
#include "judge/work.hpp"
#include "wire/digest.hpp"

namespace course::stage_prefix_hash {

namespace {

std::string text_of(const json& v) { return v.is_null() ? "missing" : v.dump(); }

std::string request_finding(size_t i, const json& e, const json& a) {
  const std::string who = "request " + std::to_string(i);
  if (!a.is_object()) return who + " has no record.";
  const json es = e.value("served", json()), as = a.value("served", json());
  if (es != as) {
    if (!es.is_number_integer() || !as.is_number_integer())
      return who + ": your lookup served " + text_of(as) + " tokens, expected " + text_of(es) + ".";
    const int64_t exp = es.get<int64_t>(), got = as.get<int64_t>();
    const int64_t block = std::min(exp, got) / kPagedBlock;
    const std::string tokens = "block " + std::to_string(block) + " (tokens " +
                               std::to_string(block * kPagedBlock) + " .. " +
                               std::to_string(block * kPagedBlock + kPagedBlock - 1) + ")";
    if (got > exp)
      return who + ": your lookup served " + std::to_string(got) + " tokens, expected " +
             std::to_string(exp) + ": the checked walk stops at " + tokens +
             ", where no remembered block holds these tokens after the blocks reused before it.";
    return who + ": your lookup served " + std::to_string(got) + " tokens, expected " +
           std::to_string(exp) + ": " + tokens +
           " is remembered from an earlier request with the same tokens after the same blocks, "
           "so it is reused.";
  }
  if (e.value("table", json()) != a.value("table", json()))
    return who + " served the expected tokens, but its blocks are " +
           text_of(a.value("table", json())) + ", expected " + text_of(e.value("table", json())) +
           ".";
  const std::optional<Digest> el = digest_at(e, "logits");
  const std::optional<Tensor> al = tensor_at(a, "logits");
  if (el && (!al || al->shape != el->shape ||
             rows_matching(*el, *al) != std::vector<bool>(el->rows.size(), true)))
    return who +
           " served the expected tokens from the expected blocks, but its logits differ: the "
           "reused blocks' "
           "contents or the prefill of the rest.";
  return "";
}

Lines localize_prefix_hash(const Fixture& fx, const json& actual) {
  if (!actual.is_object()) return {"The output is not an object."};
  const json er = fx.expected.value("requests", json::array());
  const json ar = actual.value("requests", json());
  if (!ar.is_array() || ar.size() != er.size())
    return {"requests: " + std::to_string(ar.is_array() ? ar.size() : 0) +
            " records, expected one per prompt (" + std::to_string(er.size()) + ")."};
  for (size_t i = 0; i < er.size(); ++i)
    if (std::string finding = request_finding(i, er[i], ar[i]); !finding.empty()) {
      if (i > 0)
        finding = (i == 1 ? "Request 0 agrees; "
                          : "Requests 0 .. " + std::to_string(i - 1) + " agree; ") +
                  finding;
      finding[0] = char(std::toupper(static_cast<unsigned char>(finding[0])));
      return {finding};
    }
  if (fx.expected.value("entries", json()) != actual.value("entries", json()))
    return {
        "Every request agrees, but the cache's entries at the end differ: a block is remembered "
        "only under a free key, and a key held by another run of blocks keeps it."};
  for (const char* name : {"lookup_collisions", "insert_collisions"}) {
    const json e = fx.expected.value(name, json()), a = actual.value(name, json());
    if (e == a) continue;
    return {"Every request and entry agrees, but " + std::string(name) + " is " + text_of(a) +
            ", expected " + text_of(e) +
            (std::string(name) == "lookup_collisions"
                 ? ": once for each lookup that finds a key whose entry is not the prompt's block "
                   "(other tokens, or another parent)."
                 : ": once for each insert that finds a key held by another run of blocks (other "
                   "tokens, or another parent).")};
  }
  return {};
}

int64_t unserved_of(const Fixture& fx) {
  int64_t n = 0;
  const json prompts = fx.input.value("prompts", json::array());
  const json requests = fx.expected.value("requests", json::array());
  for (size_t i = 0; i < prompts.size() && i < requests.size(); ++i)
    if (prompts[i].is_array() && requests[i].is_object())
      n += int64_t(prompts[i].size()) - requests[i].value("served", int64_t(0));
  return n;
}

const WorkRules kHashWork = {
    .positions_story =
        [](const Fixture& fx) {
          return count_text(unserved_of(fx), "prompt token") + " not served from the cache";
        },
    .learner_held = [](const Fixture&, const json&) { return WorkHeld{}; },
    .note =
        [](const Fixture&, int64_t n) {
          return each_layer_took(n) + ", one per prompt token not served from the cache";
        },
};

}  // namespace

const std::vector<AdapterRules>& adapter_rules() {
  static const std::vector<AdapterRules> rules = {
      {.name = "run_prefix_hash", .localize = localize_prefix_hash, .work = &kHashWork},
  };
  return rules;
}

}  // namespace course::stage_prefix_hash
