#include "wire/json_bounded.hpp"

namespace course {

namespace {

// Thrown by the parser callback to stop at the first container beyond the limit.
struct TooDeep {};

}  // namespace

std::string json_error_text(const std::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const size_t close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  return text;
}

json parse_json_bounded(std::string_view text, const JsonLimits& limits, const std::string& what) {
  if (text.size() > limits.max_bytes)
    throw JsonInputError(what + ": is " + std::to_string(text.size()) + " bytes long, over the limit of " +
                         std::to_string(limits.max_bytes));
  // The callback sees each container as it opens, at the depth of its parent (0 for the
  // top level), before the parser builds anything inside it.
  const json::parser_callback_t check_depth = [&](int depth, json::parse_event_t event, json&) {
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= limits.max_depth) throw TooDeep{};
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check_depth);
  } catch (const TooDeep&) {
    throw JsonInputError(what + ": is nested deeper than " + std::to_string(limits.max_depth) +
                         " levels of arrays and objects");
  } catch (const json::out_of_range& e) {
    // The parser's only range error: a number that does not fit a double.
    throw JsonInputError(what + ": holds a number too large for a double (" + json_error_text(e) + ")");
  } catch (const json::parse_error& e) {
    throw JsonInputError(what + ": is not valid JSON (" + json_error_text(e) + ")");
  } catch (const json::exception& e) {
    throw JsonInputError(what + ": cannot be read as JSON (" + json_error_text(e) + ")");
  }
}

}  // namespace course
