// Helpers for the tests in this folder: run a built program with stdout and stderr kept
// apart, paths the build passes in, and shell quoting.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_support.hpp"

#ifndef GPT2_VOCAB_DIR
#error "the build defines GPT2_VOCAB_DIR"
#endif

namespace gen_test {

using testing_support::bin;
using testing_support::read_file;
using testing_support::TempDir;
using testing_support::write_file;

// Folder of the fixture fetch_gpt3_encoder.cmake fills: vocab.json, merges.txt, package/.
inline std::filesystem::path vocab_dir() { return GPT2_VOCAB_DIR; }

// 'text' for the shell.
inline std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Output {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
};

// Runs `program args` (args already quoted as needed), stdin from /dev/null.
inline Output run(const std::string& program, const std::string& args) {
  TempDir dir;
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string cmd =
      quote(program) + " " + args + " >" + quote(out) + " 2>" + quote(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  Output r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline Output kvc(const std::string& args) { return run(bin("kvc"), args); }

}  // namespace gen_test
