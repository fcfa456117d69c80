// The known mistakes of stage one-token: its entries of the catalogue (judge/catalogue.hpp), each
// proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_one_token {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"dec.masked_decode", "decode skips cached positions",
       "the decode query is masked like prefill's row 0 and sees cached position 0 only",
       "mistake-masking-the-cache", 1},
      {"dec.wrong_scale", "scores scaled by {parameter}",
       "the attention scores are multiplied by {parameter} instead of "
       "gpt2::attention_scale(64) = 1/sqrt(64) = 0.125", "mistake-a-wrong-scale", 3},
      {"dec.append_after_attention", "k and v appended after attention",
       "decode_step attends first and appends the token's k and v afterwards, so the token "
       "never sees itself", "mistake-appending-after-attention", 2},
      {"dec.double_append", "k and v appended twice",
       "decode_step appends the token's k and v twice to every layer", "mistake-appending-twice", 0},
      {"dec.append_some_layers", "k and v appended in only some layers",
       "decode_step appends k and v in layers 0-5 only", "mistake-appending-in-only-some-layers", 0},
      {"dec.position_not_continuing", "every token at position 0",
       "decode_step embeds every token at position 0 instead of at the cache's length",
       "mistake-the-wrong-position", 1},
      {"dec.dot_four_sums", "dot product in four running sums",
       "the scores come from a dot product summed in four interleaved running sums instead of "
       "gpt2::dot's single sum in order", "mistake-close-but-not-equal", 1},
      {"dec.weighted_sum_reversed", "weighted sum from the last position",
       "the weighted sum of the value rows adds them from the last position to the first",
       "mistake-close-but-not-equal", 2},
      {"dec.std_exp", "softmax with std::exp",
       "the softmax is written with std::exp, whose last bit differs from gpt2::exp on some "
       "inputs", "mistake-close-but-not-equal", 1},
      {"dec.head0_keys_for_every_head", "head 0's keys for every head",
       "every head scores its query against head 0's keys, cache.key(0, j)", "mistake-reading-the-wrong-keys-or-values", 3},
      {"dec.values_read_from_keys", "a weighted sum of the keys",
       "attention averages the cached key rows instead of the value rows", "mistake-reading-the-wrong-keys-or-values", 2},
      {"dec.every_layer_reads_layer0", "every layer attends over layer 0's cache",
       "decode_step appends to each layer but attends over cache.layer(0) in every layer",
       "mistake-reading-the-wrong-keys-or-values", 3},
      {"dec.q_k_swapped", "q and k swapped",
       "decode_step hands model.qkv its k buffer where q goes and q where k goes", "mistake-reading-the-wrong-keys-or-values", 3},
      {"dec.logits_of_last_step_only", "only the last step's logits",
       "run_decode keeps the last step's logits instead of every step's", "mistake-logits-of-the-last-step-only", 2},
      {"dec.decode_calls_forward", "logits from Model::forward",
       "run_decode takes each step's logits from Model::forward over every token so far: "
       "the right numbers, with all the work the cache is there to save", "mistake-calling-modelforward", 1},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_one_token
