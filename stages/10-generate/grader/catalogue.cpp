// The known mistakes of stage generate: its entries of the catalogue (judge/catalogue.hpp), each
// proved by the .mistake file of the same id in this folder's mistakes/.
#include "judge/catalogue.hpp"

namespace course::stage_generate {

const std::vector<CatalogueEntry>& catalogue() {
  // clang-format off
  static const std::vector<CatalogueEntry> entries = {
      {"gen.recompute_every_step", "whole sequence recomputed at every step",
       "generate_greedy feeds each new token by prefilling the prompt and every token so far again on a fresh copy of the cache: the right tokens, with every position through the model again at each step",
       "mistake-recomputing-the-sequence-at-every-step", 1},
      {"gen.feeds_last_token", "the last token fed back",
       "generate_greedy runs a decode step after the last token too, so the cache ends one position longer than it should",
       "mistake-one-step-too-many", 1},
      {"gen.prompt_token_twice", "the prompt's last token fed twice",
       "generate_greedy prefills the prompt and then decodes its last token once more to get the first new token, so that token is in the cache twice",
       "mistake-the-prompts-last-token-twice", 1},
      {"gen.feeds_stale_token", "the first new token fed at every step",
       "generate_greedy feeds the first new token to every decode step instead of the token it has just chosen",
       "mistake-feeding-a-stale-token", 1},
      {"gen.continue_without_clone", "continuing on the saved cache",
       "every continuation is generated on the saved prefix itself: run_generate_from copies the saved ModelCache (its copy assignment shares the layers) instead of calling clone(), or ModelCache::clone() copies the layer pointers",
       "mistake-generating-on-the-saved-cache", 2},
      {"gen.continuation_recomputes_prefix", "prefix recomputed for each continuation",
       "run_generate_from generates each continuation from prefix + suffix on a fresh cache: the right tokens, with the prefix through the model again every time",
       "mistake-recomputing-the-prefix", 2},
      {"gen.greedy_last_maximum", "a tie goes to the last maximum",
       "on an exact tie between the largest logits, generate_greedy takes the highest of the tied ids instead of the lowest (a >= where course::greedy has >): the tokens differ only where two logits tie",
       "mistake-the-last-of-equal-maxima", 1},
  };
  // clang-format on
  return entries;
}

}  // namespace course::stage_generate
