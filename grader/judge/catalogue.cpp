// The catalogue of known mistakes: one entry per diagnosis id, each proved by a
// tests/buggy/*.mistake file of the same id (course_test checks both ways). The grader
// names an entry only when the learner's output is bit for bit what that file produces
// (identify.cpp). That proves the output, not the code that made it, so the text states
// the symptom and then every code site known to give that same output ("the copy shares its
// layers: clone() copies the pointers, or the adapter copies the ModelCache"), never one
// cause where another known one yields the same bits.
#include <stdexcept>

#include "judge/diagnose.hpp"

namespace course {

namespace {

constexpr const char* kLesson1 = "stages/01-cache-structure/lesson.md#";
constexpr const char* kLesson2 = "stages/02-multi-layer-cache/lesson.md#";
constexpr const char* kLesson3 = "stages/03-one-token/lesson.md#";
constexpr const char* kLesson4 = "stages/04-prefill/lesson.md#";
constexpr const char* kLesson5 = "stages/05-prefix-reuse/lesson.md#";
constexpr const char* kLesson6 = "stages/06-rollback/lesson.md#";
constexpr const char* kLesson7 = "stages/07-paged-cache/lesson.md#";
constexpr const char* kLesson8 = "stages/08-prefix-cache/lesson.md#";
constexpr const char* kLesson9 = "stages/09-continuous-batching/lesson.md#";
constexpr const char* kLesson10 = "stages/10-generate/lesson.md#";

struct Entry {
  const char* id;
  const char* title;
  const char* explanation;
  const char* lesson;  // its stage's lesson file
  const char* anchor;
  int hint;  // the tier of the stage's hints (manifest.json) that addresses it; 0: none does
};

// clang-format off
const Entry kEntries[] = {
    // ---- cache-structure
    {"kvc.transposed_layout", "transposed layout",
     "key(h, p) and value(h, p) read the position-major [seq, 768] buffer as if it were "
     "head-major, at (h * seq + p) * 64", kLesson1, "mistake-transposed-layout", 1},
    {"kvc.off_by_one_growth", "append adds two positions",
     "append() stores the new position twice, so the cache grows by 2", kLesson1,
     "mistake-off-by-one-growth", 2},
    {"kvc.kv_swapped", "keys and values swapped",
     "the keys read back are the values appended and the values the keys: append(k, v) "
     "stores k among the values and v among the keys, or key() reads values_ and value() "
     "reads keys_", kLesson1,
     "mistake-keys-and-values-swapped", 2},
    {"kvc.key_transposed", "key() transposed, value() right",
     "key(h, p) reads the buffer at (h * seq + p) * 64 as if it were head-major; value() "
     "reads it right", kLesson1, "mistake-one-sided-key-or-value", 1},
    {"kvc.value_reads_keys", "the values read back are the keys",
     "the values read back are the keys appended: value(h, p) reads keys_, or append(k, v) "
     "stores k among the values too", kLesson1,
     "mistake-one-sided-key-or-value", 3},
    {"kvc.rows_reversed", "positions read in reverse",
     "position 0 reads the last row appended: key(h, p) and value(h, p) count positions from "
     "the newest, or append() puts each new row in front of the others", kLesson1, "mistake-rows-in-reverse-order", 1},
    {"kvc.clone_loses_length", "clone loses the length",
     "clone() copies the stored rows but gives the copy length 0", kLesson1,
     "mistake-a-clone-that-loses-its-length", 2},
    {"kvc.snapshot_position_major", "snapshot in [seq, 12, 64] order",
     "the adapter copies the snapshot position by position (for p, then for h) instead of "
     "head by head (for h, then for p); key() and value() are right", kLesson1,
     "mistake-the-snapshot-in-another-order", 1},
    {"kvc.snapshot_shape_order", "snapshot shape fields out of order",
     "the adapter's snapshot shape is {length, 12, 64} instead of {12, length, 64}", kLesson1,
     "mistake-the-snapshot-in-another-order", 3},
    {"kvc.clone_copies_last_cache", "clone copies the newest cache",
     "the adapter's clone step copies the cache created last instead of cache op.cache",
     kLesson1, "mistake-routing-to-the-wrong-cache", 2},
    {"kvc.append_to_last_cache", "appends go to the newest cache",
     "the adapter's append step appends to the cache created last instead of cache op.cache",
     kLesson1, "mistake-routing-to-the-wrong-cache", 2},
    // ---- multi-layer-cache
    {"kvc.shared_layers", "layers share one cache",
     "ModelCache() makes one KVCache and points all twelve layers at it", kLesson2,
     "mistake-layers-sharing-one-cache", 1},
    {"kvc.length_counts_all_layers", "length counts every layer's appends",
     "length() reads a counter shared by every cache: the appends made anywhere so far",
     kLesson2, "mistake-a-length-that-counts-every-layer", 1},
    {"kvc.shallow_clone", "shallow clone",
     "the copy shares its twelve layers with the original: ModelCache::clone() copies the "
     "layer pointers, or the adapter copies the ModelCache (`ModelCache copy = original;`) "
     "instead of calling clone()", kLesson2, "mistake-shallow-clone", 1},
    {"kvc.clone_empty", "clone starts empty",
     "the copy starts empty: ModelCache::clone() returns a fresh ModelCache instead of a copy, "
     "or the adapter makes a new ModelCache instead of calling clone()", kLesson2,
     "mistake-a-clone-that-starts-empty", 2},
    {"kvc.clone_only_first_layer", "clone copies layer 0 only",
     "ModelCache::clone() clones layer 0 and leaves the copy's other layers empty", kLesson2,
     "mistake-a-partial-or-reordered-clone", 2},
    {"kvc.clone_layers_reversed", "clone reverses the layers",
     "ModelCache::clone() puts layer l's clone in slot 11 - l", kLesson2,
     "mistake-a-partial-or-reordered-clone", 2},
    {"kvc.shape_row_field_order", "shape rows with fields out of order",
     "the adapter's shape rows are {length, 12, 64} instead of {12, length, 64}", kLesson2,
     "mistake-shape-rows-out-of-order", 3},
    {"kvc.clone_appends_to_original", "the copy's appends go to the original",
     "the clone adapter appends `after_clone` to the original instead of the copy", kLesson2,
     "mistake-appends-sent-to-the-wrong-cache", 2},
    // ---- one-token
    {"dec.masked_decode", "decode skips cached positions",
     "the decode query is masked like prefill's row 0 and sees cached position 0 only",
     kLesson3, "mistake-masking-the-cache", 1},
    {"dec.wrong_scale", "scores scaled by {parameter}",
     "the attention scores are multiplied by {parameter} instead of "
     "gpt2::attention_scale(64) = 1/sqrt(64) = 0.125", kLesson3, "mistake-a-wrong-scale", 3},
    {"dec.append_after_attention", "k and v appended after attention",
     "decode_step attends first and appends the token's k and v afterwards, so the token "
     "never sees itself", kLesson3, "mistake-appending-after-attention", 2},
    {"dec.double_append", "k and v appended twice",
     "decode_step appends the token's k and v twice to every layer", kLesson3,
     "mistake-appending-twice", 0},
    {"dec.append_some_layers", "k and v appended in only some layers",
     "decode_step appends k and v in layers 0-5 only", kLesson3,
     "mistake-appending-in-only-some-layers", 0},
    {"dec.position_not_continuing", "every token at position 0",
     "decode_step embeds every token at position 0 instead of at the cache's length",
     kLesson3, "mistake-the-wrong-position", 1},
    {"dec.dot_four_sums", "dot product in four running sums",
     "the scores come from a dot product summed in four interleaved running sums instead of "
     "gpt2::dot's single sum in order", kLesson3, "mistake-close-but-not-equal", 1},
    {"dec.weighted_sum_reversed", "weighted sum from the last position",
     "the weighted sum of the value rows adds them from the last position to the first",
     kLesson3, "mistake-close-but-not-equal", 2},
    {"dec.std_exp", "softmax with std::exp",
     "the softmax is written with std::exp, whose last bit differs from gpt2::exp on some "
     "inputs", kLesson3, "mistake-close-but-not-equal", 1},
    {"dec.head0_keys_for_every_head", "head 0's keys for every head",
     "every head scores its query against head 0's keys, cache.key(0, j)", kLesson3,
     "mistake-reading-the-wrong-keys-or-values", 3},
    {"dec.values_read_from_keys", "a weighted sum of the keys",
     "attention averages the cached key rows instead of the value rows", kLesson3,
     "mistake-reading-the-wrong-keys-or-values", 2},
    {"dec.every_layer_reads_layer0", "every layer attends over layer 0's cache",
     "decode_step appends to each layer but attends over cache.layer(0) in every layer",
     kLesson3, "mistake-reading-the-wrong-keys-or-values", 3},
    {"dec.q_k_swapped", "q and k swapped",
     "decode_step hands model.qkv its k buffer where q goes and q where k goes", kLesson3,
     "mistake-reading-the-wrong-keys-or-values", 3},
    {"dec.logits_of_last_step_only", "only the last step's logits",
     "run_decode keeps the last step's logits instead of every step's", kLesson3,
     "mistake-logits-of-the-last-step-only", 2},
    {"dec.decode_calls_forward", "logits from Model::forward",
     "run_decode takes each step's logits from Model::forward over every token so far: "
     "the right numbers, with all the work the cache is there to save", kLesson3,
     "mistake-calling-modelforward", 1},
    // ---- prefill
    {"dec.prefill_no_mask", "prefill without a causal mask",
     "attend_causal lets every row attend to the whole prompt, later positions included",
     kLesson4, "mistake-no-causal-mask", 1},
    {"dec.mask_off_by_one", "causal mask off by one",
     "attend_causal lets row i see positions 0 .. i-1 but not itself", kLesson4,
     "mistake-a-mask-off-by-one", 1},
    {"dec.causal_ignores_cached_past", "mask ignores the cached past",
     "attend_causal numbers its rows from 0 whatever the cache held before them: row r "
     "sees positions 0 .. r", kLesson4, "mistake-a-mask-that-ignores-the-cached-past", 1},
    {"dec.prefill_rows_reversed", "rows appended in reverse",
     "prefill appends the batch's k and v rows last row first", kLesson4,
     "mistake-rows-appended-in-reverse", 2},
    {"dec.prefill_logits_of_first_row", "logits of the first row",
     "prefill returns the logits of the batch's first row instead of its last", kLesson4,
     "mistake-the-first-rows-logits", 1},
    {"dec.positions_restart_at_zero", "positions restart at 0",
     "prefill numbers its rows 0, 1, 2, ... whatever the cache already holds", kLesson4,
     "mistake-positions-that-restart-at-0", 1},
    // ---- prefix-reuse
    {"dec.reuse_mutates_saved", "continuing on the saved cache itself",
     "the suffix is appended to the saved prefix itself: continue_from copies the saved "
     "ModelCache (its copy constructor or assignment shares the layers) instead of calling "
     "clone(), or ModelCache::clone() copies the layer pointers", kLesson5,
     "mistake-reusing-without-a-clone", 2},
    {"dec.continue_from_empty_cache", "continuing from an empty cache",
     "the suffix is prefilled into an empty cache, leaving the prefix out: continue_from "
     "starts from a new ModelCache, or ModelCache::clone() returns an empty one",
     kLesson5, "mistake-continuing-from-an-empty-cache", 2},
    {"dec.continue_from_previous", "continuing from the previous continuation",
     "run_prefix_reuse continues each suffix from the previous continuation instead of from "
     "the saved prefix", kLesson5, "mistake-continuing-from-the-previous-continuation", 2},
    {"dec.continuation_recomputes_prefix", "prefix recomputed",
     "run_prefix_reuse computes each continuation as a fresh save_prefix of prefix + suffix: "
     "the right numbers, with the prefix through the model again each time", kLesson5,
     "mistake-recomputing-the-prefix", 2},
    {"dec.saved_rows_read_from_continuation", "saved rows read from the continuation",
     "run_prefix_reuse records the continuation's shape rows where the saved cache's belong",
     kLesson5, "mistake-the-saved-rows-read-from-the-wrong-cache", 2},
    // ---- rollback
    {"rb.crop_keeps_last", "crop keeps the last n",
     "KVCache::crop(n) erases positions from the front and keeps the last n, not the first n",
     kLesson6, "mistake-keeping-the-last-n", 1},
    {"rb.crop_one_layer", "crop in layer 0 only",
     "ModelCache::crop crops layer 0; the other eleven layers keep the rejected positions",
     kLesson6, "mistake-cropping-one-layer", 3},
    {"rb.crop_keeps_stale_rows", "crop keeps the stale rows",
     "KVCache::crop lowers the length but leaves the rows in the buffers, so the next append lands after the rejected ones",
     kLesson6, "mistake-a-length-that-forgets-rows-that-remember", 1},
    {"rb.speculate_on_shared_copy", "speculation on a shared copy",
     "run_speculative speculates on a copy that shares the prompt's layers, so cropping and decoding change the prompt's cache too: it copies the ModelCache instead of calling clone(), or ModelCache::clone() copies the layer pointers",
     kLesson6, "mistake-cropping-the-original", 2},
    {"rb.crop_accepted_off_by_one", "crop one short",
     "a round crops to n + accepted - 1, dropping the last accepted draft token as well",
     kLesson6, "mistake-off-by-one-at-the-accepted-length", 2},
    {"rb.crop_last_cache", "crops go to the newest cache",
     "the adapter's crop step crops the cache created last instead of cache op.cache",
     kLesson6, "mistake-cropping-the-wrong-cache", 2},
    // ---- paged-cache
    {"pg.no_copy_on_write", "no copy-on-write",
     "grow never copies a shared, partly filled last block, so a fork writes into a block its sibling still reads",
     kLesson7, "mistake-no-copy-on-write", 1},
    {"pg.new_block_one_early", "new block one position early",
     "grow counts one position too many when it sizes the block table: 15 positions already take a second block",
     kLesson7, "mistake-off-by-one-at-the-block-boundary", 1},
    {"pg.release_leaks_blocks", "release leaks blocks",
     "release() gives back only the last block of the table; the others stay allocated",
     kLesson7, "mistake-leaking-blocks-on-release", 2},
    {"pg.release_frees_shared", "release frees shared blocks",
     "BlockPool::release frees a block outright while other sequences still hold it",
     kLesson7, "mistake-freeing-a-shared-block", 1},
    {"pg.contiguous_table", "blocks assumed contiguous",
     "key(), value() and write() use block table_[0] + pos / 16, as if a sequence's blocks were consecutive in the pool",
     kLesson7, "mistake-assuming-the-blocks-are-contiguous", 1},
    {"pg.grow_check_forgets_copy", "all or nothing, but the copy is not counted",
     "a grow that needs a copy-on-write block and new blocks, in a pool that lacks one of them, takes "
     "the copy and then throws PoolExhausted, so the sequence's table and the counts change: grow's "
     "check counts the new blocks but not the copy, or grow takes its blocks one by one with no check first",
     kLesson7, "mistake-a-check-that-forgets-the-copy", 2},
    // ---- prefix-cache
    {"pc.key_without_parent", "block key without its parent",
     "each block is keyed by its own 16 tokens only, so equal blocks after different pasts collide",
     kLesson8, "mistake-a-key-of-the-blocks-own-tokens", 1},
    {"pc.cache_partial_block", "partial block cached",
     "insert() also caches the sequence's last, partly filled block under the tokens it holds so far",
     kLesson8, "mistake-reusing-a-partly-filled-block", 1},
    {"pc.evict_lowest_block", "wrong eviction order",
     "make_room evicts in block id order instead of least recently used, deepest first",
     kLesson8, "mistake-the-wrong-eviction-order", 2},
    {"pc.recompute_cached", "cached prefix recomputed",
     "the trace computes every prompt in full on a fresh sequence: the right logits, with the cached positions through the model again",
     kLesson8, "mistake-counting-reused-positions-as-computed", 2},
    // ---- continuous-batching
    {"cb.attends_other_sequence", "attends over another sequence",
     "decode_batch attends every row over the first sequence of the batch",
     kLesson9, "mistake-reading-another-sequences-blocks", 1},
    {"cb.positions_from_batch_index", "positions from the batch index",
     "decode_batch takes a row's position from its place in the batch, not from its sequence's length",
     kLesson9, "mistake-positions-from-the-batch", 1},
    {"cb.decodes_finished_request", "a finished request decoded again",
     "a request retires one step late, so it is decoded once more than its budget",
     kLesson9, "mistake-decoding-a-finished-request", 2},
    {"cb.retire_without_release", "finished request keeps its blocks",
     "a finished request leaves the batch without releasing its sequence's blocks",
     kLesson9, "mistake-not-releasing", 2},
    {"cb.admission_ignores_commitments", "admission ignores commitments",
     "admission counts the free blocks of the moment, not those the running sequences will still need",
     kLesson9, "mistake-admission-that-ignores-the-pool", 1},
    {"cb.admission_one_position_more", "admission sizes a request one position too long",
     "admission counts prompt + max_new_tokens positions for a request, one more than it holds (its last token is never fed back), so on a block boundary it waits for a block it will never use",
     kLesson9, "mistake-a-request-one-position-too-long", 1},
    // ---- generate
    {"gen.recompute_every_step", "whole sequence recomputed at every step",
     "generate_greedy feeds each new token by prefilling the prompt and every token so far again on a fresh copy of the cache: the right tokens, with every position through the model again at each step",
     kLesson10, "mistake-recomputing-the-sequence-at-every-step", 1},
    {"gen.feeds_last_token", "the last token fed back",
     "generate_greedy runs a decode step after the last token too, so the cache ends one position longer than it should",
     kLesson10, "mistake-one-step-too-many", 1},
    {"gen.prompt_token_twice", "the prompt's last token fed twice",
     "generate_greedy prefills the prompt and then decodes its last token once more to get the first new token, so that token is in the cache twice",
     kLesson10, "mistake-the-prompts-last-token-twice", 1},
    {"gen.feeds_stale_token", "the first new token fed at every step",
     "generate_greedy feeds the first new token to every decode step instead of the token it has just chosen",
     kLesson10, "mistake-feeding-a-stale-token", 1},
    {"gen.continue_without_clone", "continuing on the saved cache",
     "every continuation is generated on the saved prefix itself: run_generate_from copies the saved ModelCache (its copy assignment shares the layers) instead of calling clone(), or ModelCache::clone() copies the layer pointers",
     kLesson10, "mistake-generating-on-the-saved-cache", 2},
    {"gen.continuation_recomputes_prefix", "prefix recomputed for each continuation",
     "run_generate_from generates each continuation from prefix + suffix on a fresh cache: the right tokens, with the prefix through the model again every time",
     kLesson10, "mistake-recomputing-the-prefix", 2},
    {"gen.greedy_last_maximum", "a tie goes to the last maximum",
     "on an exact tie between the largest logits, generate_greedy takes the highest of the tied ids instead of the lowest (a >= where course::greedy has >): the tokens differ only where two logits tie",
     kLesson10, "mistake-the-last-of-equal-maxima", 1},
};
// clang-format on

std::string fill(std::string text, const std::string& parameter) {
  const std::string key = "{parameter}";
  for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), parameter);
  return text;
}

}  // namespace

const std::vector<KnownMistake>& known_mistakes() {
  static const std::vector<KnownMistake> all = [] {
    std::vector<KnownMistake> v;
    static std::vector<std::string> lessons;  // keeps the joined paths alive
    lessons.reserve(std::size(kEntries));
    for (const Entry& e : kEntries) {
      lessons.push_back(std::string(e.lesson) + e.anchor);
      v.push_back({e.id, e.title, e.explanation, lessons.back().c_str(), e.hint});
    }
    return v;
  }();
  return all;
}

Diagnosis diagnosis(const std::string& id, const std::string& parameter) {
  for (const KnownMistake& m : known_mistakes())
    if (id == m.id)
      return {m.id,     parameter, fill(m.title, parameter), fill(m.explanation, parameter),
              m.lesson, m.hint};
  throw std::logic_error("unknown diagnosis id " + id);
}

}  // namespace course
