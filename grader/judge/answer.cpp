#include "judge/answer.hpp"

#include "wire/adapter_spec.hpp"

#include "wire/crash_record.hpp"
#include "wire/digest.hpp"

namespace course {

namespace {

// The string field `name`, cut to kMaxAnswerText; false when present but not a string.
bool text_field(const json& doc, const char* name, std::string& out) {
  if (!doc.contains(name)) return true;
  if (!doc[name].is_string()) return false;
  out = doc[name].get_ref<const std::string&>().substr(0, kMaxAnswerText);
  if (doc[name].get_ref<const std::string&>().size() > kMaxAnswerText) out += "... (cut)";
  return true;
}

// "thrown_at": at most kMaxCrashFrames unsigned offsets; false when malformed.
bool frames_field(const json& doc, std::vector<uint64_t>& out) {
  if (!doc.contains("thrown_at")) return true;
  const json& frames = doc["thrown_at"];
  if (!frames.is_array() || frames.size() > size_t(kMaxCrashFrames)) return false;
  for (const json& f : frames) {
    if (!f.is_number_unsigned()) return false;
    out.push_back(f.get<uint64_t>());
  }
  return true;
}

}  // namespace

Answer parse_answer(const std::string& frame) {
  Answer a;
  const std::string what = "the runner's answer";
  try {
    a.document = parse_json_bounded(frame, JsonLimits{}, what);
  } catch (const JsonInputError& e) {
    a.problem = e.what();
    return a;
  }
  if (!a.document.is_object()) {
    a.problem = what + ": is not a JSON object";
  } else if (!a.document.contains("status") || !a.document["status"].is_string()) {
    a.problem = what + ": has no string \"status\"";
  } else if (!text_field(a.document, "what", a.what) || !text_field(a.document, "type", a.type)) {
    a.problem = what + ": has a \"what\" or \"type\" that is not a string";
  } else if (!frames_field(a.document, a.thrown_at) ||
             !text_field(a.document, "thrown_unrecorded", a.thrown_unrecorded)) {
    a.problem = what + ": has a \"thrown_at\" that is not a list of at most " +
                std::to_string(kMaxCrashFrames) +
                " offsets, or a \"thrown_unrecorded\" that is not a string";
  } else {
    a.status = a.document["status"].get<std::string>().substr(0, 100);
  }
  return a;
}

AnswerEvidence failed_answer_evidence(const Fixture& fixture, const json& actual) {
  AnswerEvidence e;
  try {
    e.digest = output_digest(fixture.expected, actual);
  } catch (const std::exception&) {
    e.digest.clear();
  }
  // An output not of its adapter's form (wire/adapter_spec.hpp) is said so, by field, and
  // not read further: the localizers read outputs of that form.
  try {
    check_adapter_output(fixture.adapter, actual);
  } catch (const AdapterOutputError& form) {
    e.where = {std::string("The answer is not of the form its adapter answers: ") + form.what() +
               ". Nothing more is read from it."};
    return e;
  }
  try {
    e.where = localize(fixture, actual);
  } catch (const std::exception&) {
    e.where.clear();
  }
  return e;
}

std::string passed_answer_note(const Fixture& fixture, const json& actual) {
  try {
    return work_note(fixture, actual);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace course
