// The lessons teach the contract, not the code: no fenced block in a lesson calls the
// learner's functions one after another (that would be the implementation, written out),
// every lesson names the real command, and the handout's stage table lists every stage
// of the manifest, in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "judge/stages.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using testing_support::read_file;
using testing_support::source_dir;

namespace {

// The functions the learner writes: every stub's name in the files of src/ and adapters/
// (`not_implemented("KVCache::append (src/kvcache.cpp)")` gives "append").
std::set<std::string> learner_functions() {
  std::set<std::string> names;
  const std::regex stub(R"re(not_implemented\("([A-Za-z_:]+))re");
  for (const char* folder : {"src", "adapters"}) {
    for (const auto& e : fs::directory_iterator(source_dir() / folder)) {
      const std::string text = read_file(e.path());
      for (std::sregex_iterator it(text.begin(), text.end(), stub), end; it != end; ++it) {
        std::string name = (*it)[1];
        if (auto colons = name.rfind("::"); colons != std::string::npos)
          name = name.substr(colons + 2);
        names.insert(name);
      }
    }
  }
  return names;
}

struct Block {
  int first_line = 0;
  std::vector<std::string> lines;
};

std::vector<Block> fenced_blocks(const std::string& markdown) {
  std::vector<Block> blocks;
  std::istringstream in(markdown);
  bool inside = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      if (inside) blocks.push_back({number + 1, {}});
      continue;
    }
    if (inside) blocks.back().lines.push_back(line);
  }
  return blocks;
}

// The lines of `block` that call one of `functions` (`name(`, `.name(`, `->name(`).
std::vector<std::string> calls(const Block& block, const std::set<std::string>& functions) {
  std::vector<std::string> found;
  for (const std::string& line : block.lines) {
    for (const std::string& f : functions) {
      const std::regex call("(^|[^A-Za-z0-9_])" + f + "\\s*\\(");
      if (std::regex_search(line, call)) {
        found.push_back(f + ": " + line);
        break;
      }
    }
  }
  return found;
}

// A block that calls the learner's functions on two lines or more is a piece of the
// implementation; one call (how to use a function) is not.
std::string implementation_in(const std::string& markdown, const std::set<std::string>& functions) {
  std::string problems;
  for (const Block& b : fenced_blocks(markdown)) {
    const auto lines = calls(b, functions);
    if (lines.size() < 2) continue;
    problems += "block at line " + std::to_string(b.first_line) +
                " calls the learner's functions in sequence:\n";
    for (const std::string& l : lines) problems += "  " + l + "\n";
  }
  return problems;
}

}  // namespace

TEST(lessons, the_check_flags_code_that_calls_the_learners_functions_in_sequence) {
  const std::set<std::string> functions = {"prefill", "decode_step", "append"};
  EXPECT_NE(implementation_in("intro\n```\nlogits = prefill(model, cache, prompt)\nfor t: x = "
                              "decode_step(model, cache, t)\n```\n",
                              functions),
            "");
  EXPECT_NE(
      implementation_in("```cpp\ncache.layer(l).append(k, v);\nc->append(k, v);\n```\n", functions),
      "");
  // A diagram, a shell command, or one call showing a function's use are fine.
  EXPECT_EQ(implementation_in(
                "```\n[ p0 p1 p2 ]  length 3\n```\n```sh\nbuild/bin/grader --stage prefill\n```\n"
                "```\nprefill(model, cache, tokens)   // [vocab]\n```\n",
                functions),
            "");
  EXPECT_EQ(implementation_in("```\nprefilled appended\nappend_dummy(x)\nx.prefill_rows(3)\n```\n",
                              functions),
            "");
}

TEST(lessons, no_lesson_writes_out_the_implementation) {
  const auto functions = learner_functions();
  ASSERT_GT(functions.size(), 30u) << "the stubs of src/ and adapters/";
  for (const course::Stage& s : course::stage_table()) {
    const fs::path lesson = source_dir() / "stages" / s.folder / "lesson.md";
    EXPECT_EQ(implementation_in(read_file(lesson), functions), "") << lesson;
  }
}

TEST(lessons, every_lesson_gives_the_real_watch_command) {
  for (const course::Stage& s : course::stage_table()) {
    const std::string text = read_file(source_dir() / "stages" / s.folder / "lesson.md");
    EXPECT_NE(text.find("`build/bin/grader --stage " + s.slug + " --watch`"), std::string::npos)
        << s.folder;
    EXPECT_EQ(text.find("`grader --stage"), std::string::npos)
        << s.folder << ": the command is build/bin/grader";
  }
}

// The stage tables of both READMEs: a row "| n | `slug` | ..." per manifest stage, in order.
TEST(lessons, the_readmes_list_every_stage_of_the_manifest_in_order) {
  for (const fs::path& readme :
       {source_dir() / "README.md", source_dir() / "handout" / "learner" / "README.md"}) {
    const std::string text = read_file(readme);
    std::vector<std::string> rows;
    const std::regex row(R"re(\n\| *([0-9]+) *\| *`([a-z-]+)` *\|)re");
    for (std::sregex_iterator it(text.begin(), text.end(), row), end; it != end; ++it)
      rows.push_back(std::string((*it)[1]) + " " + std::string((*it)[2]));
    std::vector<std::string> stages;
    for (const course::Stage& s : course::stage_table())
      stages.push_back(std::to_string(s.number) + " " + s.slug);
    EXPECT_EQ(rows, stages) << readme;
  }
}
