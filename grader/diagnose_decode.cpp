// Known mistakes of stages one-token, prefill and prefix-reuse.
#include "diagnose.hpp"

namespace course {

const std::vector<KnownMistake>& decode_mistakes() {
  static const std::vector<KnownMistake> v;
  return v;
}

}  // namespace course
