// Results for course platforms, so the grader runs as their autograder unchanged:
// Gradescope's results.json and the Exercism test runner interface (version 2). Each test
// is one case, named "<stage slug>: <case name>".
#pragma once

#include <string>
#include <vector>

#include "judge/grade.hpp"

namespace course {

// Gradescope: {"score": passed cases, "output": summary, "tests": [{"name", "score",
// "max_score": 1, "status": "passed" | "failed", "output", "visibility": "visible"}]}.
json gradescope_results(const std::vector<StageResult>& results);

// When nothing could be graded (a broken fixture, a runner that is missing or does not
// compile): score 0, no tests, and `message` as the output.
json gradescope_error(const std::string& message);

// Exercism, version 2: {"version": 2, "status": "pass" | "fail", "tests": [{"name",
// "status": "pass" | "fail" | "error", "message" (unless pass), "output" (what the code
// printed, at most 500 characters)}]}. A case that crashed, timed out or threw is "error".
json exercism_results(const std::vector<StageResult>& results);

// {"version": 2, "status": "error", "message": message, "tests": []}.
json exercism_error(const std::string& message);

}  // namespace course
