// The results file of an autograder run (--output): never seen empty or half-written.
// Each version of it is written to a temporary file in the same folder (a random name,
// created exclusively), flushed to disk and renamed over the old one, so a reader (or a grader killed mid-write) finds either
// the previous complete document or the new one. The grader writes an error document
// first ("grading did not finish") and replaces it with the results at the end
// (grader/SANDBOX.md, "The results file").
#pragma once

#include <filesystem>
#include <string>

namespace course {

// Replaces `path` with `content` in one rename. Returns "" on success, else the reason.
std::string replace_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace course
