// Cases of stage prefix-hash, on GPT-2 small: prompts made of 16-token blocks, some shared,
// served through a cache whose keys keep 64, 8 or 2 bits. The colliding blocks are found by
// search: other tokens under a block's key, the same tokens under the same key after another
// past, a collision in a prompt's second block; then many prompts over a 2-bit key, and the
// rule that a prompt's last token is never served.
#include "course/prefix_hash.hpp"
#include "gen/builders.hpp"
#include "gen/decode_weights.hpp"
#include "hash_cases.hpp"
#include "runner/weights.hpp"

namespace course::stage_prefix_hash {

namespace {

std::vector<int> join(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const std::vector<int>& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The first block of words(seed, 16), seed = from, from + 1, ..., that `fits`.
template <typename Fits>
std::vector<int> search_block(uint32_t from, Fits fits) {
  for (uint32_t seed = from; seed < from + 1000000; ++seed) {
    std::vector<int> block = words(seed, 16);
    if (fits(block)) return block;
  }
  throw std::runtime_error("prefix-hash cases: no block found by the search");
}

}  // namespace

CaseSpec hash_case(std::string name, std::string checks, int n_blocks, int bits,
                   std::vector<std::vector<int>> prompts, int least_lookup_collisions) {
  json input = {{"weights", decode_weights_spec()},
                {"n_blocks", n_blocks},
                {"bits", bits},
                {"prompts", prompts}};
  auto finalize = [prompts, least_lookup_collisions](const json& out) {
    const gpt2::Model& model = model_for(decode_weights_spec());
    const size_t vocab = size_t(model.config().vocab);
    int64_t unserved = 0;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const json& r = out.at("requests")[i];
      const std::vector<float> forward = model.forward(prompts[i]);  // [n, vocab]
      const Tensor logits = tensor_from_json(r.at("logits"));
      require(same_bits(logits.data, forward.data() + (prompts[i].size() - 1) * vocab, vocab),
              "request " + std::to_string(i) + "'s logits are Model::forward's of its prompt");
      unserved += int64_t(prompts[i].size()) - r.at("served").get<int64_t>();
    }
    require_work(out.at("work"), unserved);
    require(out.at("lookup_collisions").get<int>() >= least_lookup_collisions,
            "the lookups meet as many colliding keys as the case says");
    json expected = out;
    for (json& r : expected["requests"]) r["logits"] = digest_logits(r["logits"]);
    expected["work"] = expected_work(out["work"]);
    return expected;
  };
  return {"prefix-hash", std::move(name), std::move(checks), "run_prefix_hash", input, finalize};
}

std::vector<CaseSpec> cases() {
  std::vector<CaseSpec> cases;
  const std::vector<int> a = words(91, 16), b = words(92, 16), c = words(93, 16), d = words(94, 16);
  const std::vector<int> tail = words(95, 5);
  cases.push_back(hash_case(
      "01-whole-keys-share-prefixes",
      "64-bit keys, no collision: A B x and A B y share two blocks, A C z one, D w none.", 64, 64,
      {join({a, b, slice(tail, 0, 3)}), join({a, b, slice(tail, 1, 5)}),
       join({a, c, slice(tail, 0, 2)}), join({d, slice(tail, 2, 4)})},
      0));

  // 8 bits: Q, other tokens than P, under P's key.
  const int bits8 = 8;
  const std::vector<int> p = words(101, 16);
  const std::vector<int> q = search_block(2000, [&](const std::vector<int>& blk) {
    return blk != p && weak_key(root_key, blk, bits8) == weak_key(root_key, p, bits8);
  });
  cases.push_back(hash_case("02-a-key-taken-by-other-tokens",
                            "8-bit keys: block Q holds other tokens than block P under the same "
                            "key. Q's lookup finds P's entry, counts a "
                            "collision and computes Q; Q's insert finds the key taken and leaves "
                            "P's entry; P is still reused after.",
                            64, bits8,
                            {join({p, slice(tail, 0, 3)}), join({q, slice(tail, 0, 3)}),
                             join({p, slice(tail, 1, 4)}), join({q, slice(tail, 2, 5)})},
                            2));

  // 8 bits: B after P1 and B after P2 share a key: the same tokens, another past.
  const std::vector<int> p1 = words(111, 16);
  const std::vector<int> p2 = search_block(3000, [&](const std::vector<int>& blk) {
    return weak_key(root_key, blk, bits8) != weak_key(root_key, p1, bits8);
  });
  const std::vector<int> c2 = words(112, 16);
  const BlockKey k1 = weak_key(root_key, p1, bits8), k2 = weak_key(root_key, p2, bits8);
  const std::vector<int> same = search_block(4000, [&](const std::vector<int>& blk) {
    return weak_key(k1, blk, bits8) == weak_key(k2, blk, bits8) &&
           weak_key(k2, blk, bits8) != weak_key(k2, c2, bits8) && blk != c2;
  });
  cases.push_back(hash_case("03-the-same-tokens-after-another-past",
                            "8-bit keys: block B after P1 and block B after P2 share a key. P2 C "
                            "and P1 B are served; then P2 B reuses P2 "
                            "but finds, under B's key, the B that follows P1: the same tokens, "
                            "another parent, a collision.",
                            64, bits8,
                            {join({p2, c2, slice(tail, 0, 2)}), join({p1, same, slice(tail, 0, 2)}),
                             join({p2, same, slice(tail, 0, 2)})},
                            1));

  // 8 bits: a collision at block 1 after a shared block 0.
  const BlockKey ka = weak_key(root_key, a, bits8);
  const std::vector<int> b2 = search_block(5000, [&](const std::vector<int>& blk) {
    return blk != b && weak_key(ka, blk, bits8) == weak_key(ka, b, bits8);
  });
  cases.push_back(hash_case("04-a-collision-in-the-second-block",
                            "8-bit keys: A B and A B' share block A; B' collides with B under A: "
                            "16 tokens served, a collision counted "
                            "on lookup and on insert.",
                            64, bits8,
                            {join({a, b, slice(tail, 0, 4)}), join({a, b2, slice(tail, 0, 4)}),
                             join({a, b2, slice(tail, 1, 3)})},
                            1));

  cases.push_back(hash_case("05-two-bit-keys",
                            "2-bit keys: six prompts over blocks A, B, C and D; most keys are "
                            "taken by other pasts, every reuse is checked, "
                            "and no request's numbers change.",
                            64, 2,
                            {join({a, b, slice(tail, 0, 2)}), join({b, a, slice(tail, 0, 2)}),
                             join({a, c, slice(tail, 0, 3)}), join({c, d, a, slice(tail, 0, 1)}),
                             join({a, b, c, slice(tail, 0, 2)}), join({d, slice(tail, 0, 4)})},
                            1));

  cases.push_back(hash_case(
      "06-the-last-token-is-computed",
      "64-bit keys: a prompt of exactly two blocks, served again, reuses only its first block: "
      "its last token goes through the model; with one token more, both blocks are reused.",
      64, 64, {join({c, d}), join({c, d}), join({c, d, slice(tail, 0, 1)})}, 0));
  return cases;
}

}  // namespace course::stage_prefix_hash
