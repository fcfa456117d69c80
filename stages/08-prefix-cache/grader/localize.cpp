// Localization of prefix-cache traces (run_prefix_trace): the first request whose served
// tokens or logits differ, the first eviction that differs, and what each key is (which
// prompt's block).
#include "judge/localize.hpp"

#include <cstdint>
#include <cstdio>

namespace course {

namespace {

constexpr int kBlock = kPagedBlock;

}  // namespace

namespace {

uint64_t fnv_block_key(uint64_t parent, const std::vector<int>& tokens, size_t from) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t bytes, int n) {
    for (int i = 0; i < n; ++i) {
      h ^= (bytes >> (8 * i)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  };
  mix(parent, 8);
  for (size_t i = from; i < from + kBlock; ++i) mix(uint32_t(tokens[i]), 4);
  return h;
}

std::string hex_key(uint64_t k) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(k));
  return buf;
}

// What a key is: the first prompt block it names (chained from its parents as
// prefix_cache.hpp says), or the first block whose tokens alone it hashes.
std::string key_story(const std::string& key, const json& prompts) {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::vector<int> t = ints_of(prompts[i]);
      uint64_t parent = 0xcbf29ce484222325ull;
      for (size_t d = 0; (d + 1) * kBlock <= t.size(); ++d) {
        const uint64_t chained = fnv_block_key(parent, t, d * kBlock);
        const uint64_t alone = fnv_block_key(0xcbf29ce484222325ull, t, d * kBlock);
        const std::string where = "prompt " + std::to_string(i) + "'s block " + std::to_string(d) +
                                  " (tokens " + std::to_string(d * kBlock) + " .. " +
                                  std::to_string(d * kBlock + kBlock - 1) + ")";
        if (pass == 0 && hex_key(chained) == key) return "the key of " + where;
        if (pass == 1 && d > 0 && hex_key(alone) == key)
          return "block_key(root_key, its tokens) of " + where +
                 ": that block's tokens alone, without its parent's key";
        parent = chained;
      }
    }
  return "a key of no prompt's full block";
}

}  // namespace

namespace {

// Requests run one after another: the first whose served tokens or logits differ.
void request_findings(const json& prompts, const json& e_req, const json& a_req, Lines& out) {
  for (size_t i = 0; i < e_req.size() && i < prompts.size(); ++i) {
    const int n = int(ints_of(prompts[i]).size());
    const json& ec = e_req[i].value("cached_tokens", json());
    const json ac = a_req[i].is_object() ? a_req[i].value("cached_tokens", json()) : json();
    const std::string who = "Request " + std::to_string(i) + " (prompt " + std::to_string(i) +
                            ", " + count_text(n, "token") + ")";
    const std::string before =
        i == 0   ? ""
        : i == 1 ? " Request 0 served the expected tokens, and its logits are right."
                 : " Requests 0 .. " + std::to_string(i - 1) +
                       " served the expected tokens, and their logits are right.";
    if (ac != ec) {
      std::string s = who + ": your cache served " + short_json(ac, 20) +
                      " tokens from the prefix cache where " + ec.dump() + " are expected";
      if (ac.is_number_integer() && ac.get<int>() % kBlock != 0)
        s += " (" + ac.dump() + " is not a whole number of 16-token blocks)";
      else if (ac.is_number_integer() && ac.get<int>() >= n)
        s += " (the whole prompt: no token is left to compute its logits)";
      out.push_back(s + "." + before);
      break;
    }
    std::optional<Digest> el = digest_at(e_req[i], "logits");
    std::optional<Tensor> al = tensor_at(a_req[i], "logits");
    if (el && (!al || al->shape != el->shape || !rows_matching(*el, *al).front())) {
      out.push_back(who + ": it served the expected " + ec.dump() +
                    " tokens from the cache, and its logits (of its last "
                    "position, computed over the served blocks and the rest of the prompt) differ" +
                    (al && al->shape != el->shape ? ": shape " + shape_text(al->shape) +
                                                        ", expected " + shape_text(el->shape)
                                                  : "") +
                    "." + before);
      break;
    }
  }
}

// The evictions, in order: the first that differs.
void eviction_findings(const json& prompts, const json& ee, const json& ae, Lines& out) {
  if (ae.is_array() && ae != ee) {
    size_t k = 0;
    while (k < ee.size() && k < ae.size() && ae[k] == ee[k]) ++k;
    std::string s =
        "Evictions: " +
        (k == 0 ? std::string("")
                : (k == 1 ? "eviction 0 is right; "
                          : "evictions 0 .. " + std::to_string(k - 1) + " are right; "));
    if (k < ae.size() && k < ee.size())
      s += "eviction " + std::to_string(k) + " is " + short_json(ae[k], 20) + " (" +
           key_story(ae[k].is_string() ? ae[k].get<std::string>() : "", prompts) + ") where " +
           ee[k].dump() + " (" + key_story(ee[k].get<std::string>(), prompts) + ") is expected";
    else if (k < ee.size())
      s += "yours stop after " + count_text(int64_t(ae.size()), "eviction") +
           "; next expected is " + ee[k].dump() + " (" +
           key_story(ee[k].get<std::string>(), prompts) + ")";
    else
      s += "yours evict " + count_text(int64_t(ae.size() - ee.size()), "key") + " more, first " +
           short_json(ae[k], 20) + " (" +
           key_story(ae[k].is_string() ? ae[k].get<std::string>() : "", prompts) + ")";
    out.push_back(s + ".");
  }
}

// The entries at the end, by key: the first expected one that differs or is missing, and
// the first one the reference's cache does not hold.
void entry_findings(const json& prompts, const json& en, const json& an, Lines& out) {
  if (an.is_array() && an != en) {
    std::map<std::string, json> mine;
    for (const json& x : an)
      if (x.is_object() && x.contains("key")) mine[x["key"].dump()] = x;
    for (const json& x : en) {
      auto it = mine.find(x["key"].dump());
      const std::string key = x["key"].get<std::string>();
      if (it == mine.end()) {
        out.push_back("At the end, your cache does not hold " + x["key"].dump() + " (" +
                      key_story(key, prompts) + ", block " + x["block"].dump() + ", last_used " +
                      x["last_used"].dump() + ").");
        break;
      }
      if (it->second != x) {
        std::string s;
        for (const char* f : {"block", "depth", "last_used"})
          if (it->second.value(f, json()) != x[f])
            s += (s.empty() ? "" : ", ") + std::string(f) + " " +
                 it->second.value(f, json()).dump() + " (expected " + x[f].dump() + ")";
        out.push_back("At the end, your entry for " + x["key"].dump() + " (" +
                      key_story(key, prompts) + ") has " + s + ".");
        break;
      }
    }
    for (const json& x : an) {
      if (!x.is_object()) {
        out.push_back("At the end, your entries hold " + short_json(x, 40) +
                      ", which is not an entry.");
        break;
      }
      bool expected = false;
      for (const json& y : en)
        expected = expected || (x.is_object() && y["key"] == x.value("key", json()));
      if (!expected) {
        out.push_back(
            "At the end, your cache holds " + short_json(x.value("key", json()), 20) + " (" +
            key_story(x.value("key", json()).is_string() ? x["key"].get<std::string>() : "",
                      prompts) +
            "), which the reference's does not.");
        break;
      }
    }
  }
}

}  // namespace

Lines localize_prefix_trace(const Fixture& fx, const json& actual) {
  Lines out;
  if (!actual.is_object()) return {"The output is not an object."};
  const json& prompts = fx.input.value("prompts", json::array());
  const json& e_req = fx.expected.value("requests", json::array());
  const json a_req = actual.value("requests", json());
  if (!a_req.is_array() || a_req.size() != e_req.size())
    return {"requests: " + std::to_string(e_req.size()) + " expected, got " +
            short_json(a_req, 60) + ". Nothing more is read from them."};
  request_findings(prompts, e_req, a_req, out);
  eviction_findings(prompts, fx.expected.value("evicted", json::array()),
                    actual.value("evicted", json()), out);
  entry_findings(prompts, fx.expected.value("entries", json::array()),
                 actual.value("entries", json()), out);
  if (actual.value("ref_counts", json()) != fx.expected.value("ref_counts", json()))
    out.push_back("The pool's reference counts at the end are " +
                  short_json(actual.value("ref_counts", json()), 80) + ", expected " +
                  short_json(fx.expected.value("ref_counts", json()), 80) +
                  " (the cache holds one reference to each block it remembers; every request has "
                  "let its sequence go).");
  return out;
}

// ---- stage continuous-batching ---------------------------------------------------------------

}  // namespace course
