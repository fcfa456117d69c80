// Reading JSON that someone else wrote (a fixture, a runner's answer, the stage manifest)
// with limits, so that no document can exhaust the grader's stack or memory, and every
// problem is a sentence naming the document rather than a library's exception.
//
// nlohmann's parser itself is iterative, and so is the destruction of a document; what is
// not is everything that walks a document afterwards (dump(), comparisons, reports). The
// depth limit is enforced while parsing, before anything deeper than it is built, so the
// walkers behind it recurse at most max_depth levels.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace course {

using json = nlohmann::json;

// Nesting of arrays and objects in any document the grader reads. The deepest course
// document (a fixture of stage prefix-reuse) nests 5 levels.
inline constexpr int kMaxJsonDepth = 64;

struct JsonLimits {
  int max_depth = kMaxJsonDepth;    // arrays and objects inside one another
  size_t max_bytes = size_t(1) << 30;  // length of the text
};

struct JsonInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses `text`. Throws JsonInputError "<what>: <problem>": not valid JSON (with line and
// column), nested deeper than limits.max_depth, a number beyond a double's range (1e400),
// longer than limits.max_bytes. `what` names the document: a file's path, "the answer".
json parse_json_bounded(std::string_view text, const JsonLimits& limits, const std::string& what);

// A library exception's text without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const std::exception& e);

}  // namespace course
