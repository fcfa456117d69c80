// Results for course platforms, so the grader runs as their autograder unchanged:
// Gradescope's results.json and the Exercism test runner interface (version 3). Each test
// is one case, named "<stage slug>: <case name>". autograders/ wraps both for their
// platforms (autograders/README.md).
#pragma once

#include <string>
#include <vector>

#include "judge/grade.hpp"

namespace course {

// Gradescope: {"score", "execution_time" (seconds), "output", "output_format": "text",
// "test_output_format": "text", "test_name_format": "text", "tests": [{"name", "score",
// "max_score", "status": "passed" | "failed", "output", "output_format": "text",
// "visibility": "visible"}]}. A stage's points (stages/manifest.json) are shared equally
// by its cases; "score" is the sum of the tests' scores. Text formats everywhere, so a
// compiler message or `std::vector<float>` is shown as written, not as HTML.
json gradescope_results(const std::vector<StageResult>& results, double execution_seconds);

// When nothing could be graded (a broken fixture, a missing runner): score 0, no tests,
// and `message` as the output.
json gradescope_error(const std::string& message, double execution_seconds);

// The code does not compile: one failed test "compiles", worth every stage's points, whose
// output is the compiler's message.
json gradescope_compile_error(const std::string& compiler_output, double execution_seconds);

// Exercism, version 3: {"version": 3, "status": "pass" | "fail", "tests": [{"name",
// "status": "pass" | "fail" | "error", "message" (unless pass), "output" (what the code
// printed, at most 500 characters), "test_code" (what the case checks and its input),
// "task_id" (the stage's number)}]}, in stage and case order. A case that crashed, timed
// out or threw is "error". A hidden case's checks sentence and input are not shown (its
// test_code and message say "not shown (a hidden case)"); a random case's test_code ends
// with the command line that replays it.
json exercism_results(const std::vector<StageResult>& results);

// {"version": 3, "status": "error", "message": message, "tests": []}.
json exercism_error(const std::string& message);

// What the Exercism interface allows a test's output: 500 characters, and the message it
// asks for when more was cut.
inline constexpr size_t kExercismOutputLimit = 500;
inline constexpr const char* kExercismTruncated = "Output was truncated. Please limit to 500 chars";

}  // namespace course
