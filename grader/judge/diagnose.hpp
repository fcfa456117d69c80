// Diagnoses: what the grader can prove about a failing stage, and nothing else. Two kinds:
//
//  * Identification (identify.cpp). The fixtures record, for every case, what each
//    catalogued mistake (stages/*/mistakes/*.mistake) returns: the digest of its whole output, or
//    "passes" (wire/fixture.hpp, MistakeRecord). A mistake is named only when it agrees
//    with the learner on every case graded in the run: the same digest on each case the
//    learner fails, "passes" on each case the learner passes. The numerics are bit-exact,
//    so an equal digest is the same output, and the generator proved that no two mistakes
//    of a stage give the same answers on every case. Several agree: all are named; none:
//    none is.
//  * Localization (localize*.cpp). Where the learner's numbers first depart from the
//    reference, in the order they are computed, said as what is observed: what is right
//    just before it, what lies between the last right and the first wrong number, and for
//    stages 1-2 what the self-describing values say was returned instead; for the plans
//    and servers of stages 6-9, the judge replays the input by the stage's rules and names
//    the earliest step whose result the learner's final state does not show (a paged plan
//    is also run again cut short, to name the step after which those runs depart from the
//    rules). Every figure it states of the learner is read from the learner's output. It
//    names no mistake.
#pragma once

#include <string>
#include <vector>

#include "judge/compare.hpp"
#include "wire/fixture.hpp"

namespace course {

// A named mistake: one catalogue entry (with the parameter its .mistake file gave, e.g. the
// scale factor) that the learner's output matched on every graded case.
struct Diagnosis {
  std::string id;           // stable, e.g. "kvc.transposed_layout"
  std::string parameter;    // e.g. "1/sqrt(768)"; may be empty
  std::string title;        // a few words, the parameter filled in
  std::string explanation;  // what the mistake does, the parameter filled in
  std::string lesson;       // "stages/01-cache-structure/lesson.md#mistake-transposed-layout"
  int hint = 0;             // the tier of its stage's hints that addresses it; 0: none does
};

// One catalogue entry. `title` and `explanation` may hold "{parameter}".
struct KnownMistake {
  std::string id;
  std::string title;
  std::string explanation;
  std::string lesson;  // its stage's lesson file and the entry's anchor
  int hint;            // the tier of its stage's hints that addresses it, chosen by hand; 0: none
};
const std::vector<KnownMistake>& known_mistakes();  // catalogue.cpp

// The entry for `id` with its parameter filled in; throws std::logic_error for an id that
// is not catalogued.
Diagnosis diagnosis(const std::string& id, const std::string& parameter);

// What a learner's run gave on one graded case, for identification.
struct CaseEvidence {
  const Fixture* fixture = nullptr;
  bool passed = false;
  std::string digest;  // output_digest of a failing case's output; empty: no output at all
};

// Whether the generator recorded the mistakes' answers for this case (a fixture of
// fixtures/ or of the hidden set made with --mistakes; never a case of grader --random).
bool has_mistake_records(const Fixture& fixture);

// The catalogued mistakes consistent with every case that has records (see the top of this
// file). A case without records is left out: it can neither name a mistake nor rule one
// out, so nothing is named unless some case with records fails. A learner failing only
// cases without records gets localization alone, never a name the records do not show.
std::vector<Diagnosis> identify(const std::vector<CaseEvidence>& cases);

// Where a failing case's output first departs from the expected one: a few lines, each a
// sentence, in computation order. Empty when nothing more than the mismatches can be said.
std::vector<std::string> localize(const Fixture& fixture, const json& actual);

// The rows a GPT-2 run put through the model (its "work"): on a pass, one line on what
// the cache saved; empty for cases without work.
std::string work_note(const Fixture& fixture, const json& actual);

// Helpers shared by the localizers: the `length` of each [n_heads, length, head_dim]
// shape row (empty when `rows` is not a list of such rows), and "[2, 0, 1]".
std::vector<int> shape_row_lengths(const json& rows);
std::string list_text(const std::vector<int>& values);

}  // namespace course
