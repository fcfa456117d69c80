// Pictures of the learner's cache (`grader --report FILE.html`, `p` in watch mode): for
// each stage graded, its first failing case drawn next to the reference's answer. One
// self-contained file: inline CSS and SVG, no script, no font or image from elsewhere.
//   paged-cache (stage 7)          each sequence's block table and the pool's reference
//                                  counts, learner above reference, differing cells marked
//   prefix-cache (stage 8)         the cache's blocks in LRU order (least recently used
//                                  first) with their keys, depths and last use
//   continuous-batching (stage 9)  the batch per step: which requests were prefilled,
//                                  which decoded, and the free blocks
//   tensors (every stage)          a heatmap of which (layer, head, position) rows differ
// The data are the case's expected output (the fixture's) and the learner's output, which
// grading keeps for the first failed case of a stage when GradeOptions::keep_failed_outputs
// is set. Every text that comes from the code under test is escaped.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "judge/grade.hpp"

namespace course {

std::string html_report(const std::vector<StageResult>& results);

// Writes html_report to `path` (through a temporary file in the same folder, then renamed).
// Returns "" or what went wrong.
std::string write_html_report(const std::filesystem::path& path,
                              const std::vector<StageResult>& results);

}  // namespace course
