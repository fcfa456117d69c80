// Watch mode's parts: which files count, content snapshots, trimming the compiler's
// output to the learner's files, running the rebuild, and hints.
#include "cli/watch.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include "test_support.hpp"

using namespace course;
using testing_support::has;
using testing_support::TempDir;
using testing_support::write_file;
namespace fs = std::filesystem;

TEST(watch, counts_sources_and_headers) {
  for (const char* name : {"kvcache.cpp", "decode.cpp", "x.hpp", "x.h", "x.cc", "sub/x.cpp"})
    EXPECT_TRUE(is_watched_source(name)) << name;
}

TEST(watch, ignores_editor_droppings) {
  for (const char* name :
       {"4913", ".kvcache.cpp.swp", ".kvcache.cpp.swx", "kvcache.cpp~", ".#kvcache.cpp",
        "#kvcache.cpp#", "kvcache.cpp.tmp", "notes.md", "CMakeLists.txt", ".hidden.cpp"})
    EXPECT_FALSE(is_watched_source(name)) << name;
}

TEST(watch, snapshot_changes_with_content_only) {
  TempDir dir;
  write_file(dir / "a.cpp", "int a;\n");
  SourceSnapshot before = snapshot_sources({dir.path()});
  ASSERT_EQ(before.size(), 1u);

  write_file(dir / "a.cpp", "int a;\n");  // saved again, same bytes
  fs::last_write_time(dir / "a.cpp", fs::file_time_type::clock::now());
  EXPECT_EQ(snapshot_sources({dir.path()}), before);

  write_file(dir / "4913", "x");
  write_file(dir / ".a.cpp.swp", "x");
  write_file(dir / "a.cpp~", "int a;\n");
  EXPECT_EQ(snapshot_sources({dir.path()}), before);

  write_file(dir / "a.cpp", "int a = 1;\n");
  SourceSnapshot after = snapshot_sources({dir.path()});
  EXPECT_NE(after, before);
  EXPECT_EQ(changed_files(before, after), std::vector<std::string>{(dir / "a.cpp").string()});
}

TEST(watch, snapshot_reaches_into_subfolders_and_sees_removals) {
  TempDir dir;
  write_file(dir / "a.cpp", "int a;\n");
  SourceSnapshot before = snapshot_sources({dir.path()});
  write_file(dir / "deep" / "er" / "b.hpp", "#pragma once\n");
  SourceSnapshot added = snapshot_sources({dir.path()});
  EXPECT_EQ(changed_files(before, added),
            std::vector<std::string>{(dir / "deep" / "er" / "b.hpp").string()});
  fs::remove(dir / "a.cpp");
  SourceSnapshot removed = snapshot_sources({dir.path()});
  EXPECT_EQ(changed_files(added, removed), std::vector<std::string>{(dir / "a.cpp").string()});
}

TEST(watch, snapshot_of_missing_folder_is_empty) {
  EXPECT_TRUE(snapshot_sources({"/nonexistent/kvcourse/src"}).empty());
}

namespace {

const char* kGccOutput =
    "[ 33%] Building CXX object CMakeFiles/runner-learner.dir/src/kvcache.cpp.o\n"
    "/course/src/kvcache.cpp: In member function 'int course::KVCache::length() const':\n"
    "/course/src/kvcache.cpp:12:3: warning: unused variable 'x' [-Wunused-variable]\n"
    "   12 |   int x;\n"
    "      |       ^\n"
    "/course/src/kvcache.cpp:13:10: error: 'lenght_' was not declared in this scope\n"
    "   13 |   return lenght_;\n"
    "      |          ^~~~~~~\n"
    "/course/include/course/kvcache.hpp:40:7: note: declared here\n"
    "/course/adapters/adapters.cpp:20:1: error: expected ';' before '}' token\n"
    "   20 | }\n"
    "      | ^\n"
    "/course/src/kvcache.cpp:30:1: error: third\n"
    "/course/src/kvcache.cpp:31:1: error: fourth\n"
    "gmake[2]: *** [CMakeFiles/runner-learner.dir/build.make:76: x.o] Error 1\n"
    "gmake[1]: *** [CMakeFiles/Makefile2:100: all] Error 2\n";

}  // namespace

TEST(watch, trims_compiler_output_to_the_learners_files) {
  std::string t = trim_compiler_output(kGccOutput, {"/course/src", "/course/adapters"});
  EXPECT_TRUE(has(t, "In member function")) << t;
  EXPECT_TRUE(has(t, "kvcache.cpp:13:10: error: 'lenght_'")) << t;
  EXPECT_TRUE(has(t, "   13 |   return lenght_;")) << t;  // the excerpt under the error
  EXPECT_TRUE(has(t, "adapters.cpp:20:1: error")) << t;
  EXPECT_TRUE(has(t, "error: third")) << t;
  EXPECT_FALSE(has(t, "error: fourth")) << t;  // three errors at most
  EXPECT_FALSE(has(t, "warning")) << t;
  EXPECT_FALSE(has(t, "int x;")) << t;
  EXPECT_FALSE(has(t, "gmake")) << t;
  EXPECT_FALSE(has(t, "Building CXX")) << t;
  EXPECT_FALSE(has(t, "include/course")) << t;
}

TEST(watch, shows_error_lines_when_none_names_the_learners_files) {
  const char* link =
      "[100%] Linking CXX executable bin/runner-learner\n"
      "/usr/bin/ld: bindings_cache.cpp.o: in function `run': undefined reference to "
      "`course::KVCache::length() const'\n"
      "collect2: error: ld returned 1 exit status\n"
      "gmake[2]: *** [bin/runner-learner] Error 1\n";
  std::string t = trim_compiler_output(link, {"/course/src"});
  EXPECT_TRUE(has(t, "undefined reference to `course::KVCache::length() const'")) << t;
  EXPECT_FALSE(has(t, "gmake")) << t;
}

TEST(watch, keeps_the_line_cap) {
  std::string many;
  for (int i = 0; i < 100; ++i) many += "/course/src/a.cpp:" + std::to_string(i) + ":1: note: n\n";
  std::string t = trim_compiler_output(many, {"/course/src"}, 3, 10);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 10);
}

TEST(watch, run_build_reports_status_and_output) {
  BuildResult ok = run_build("echo built; echo to-stderr >&2");
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_TRUE(has(ok.output, "built")) << ok.output;
  EXPECT_TRUE(has(ok.output, "to-stderr")) << ok.output;

  BuildResult bad = run_build("echo 'a.cpp:1:1: error: no'; exit 3");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_TRUE(has(bad.output, "error: no"));
}

TEST(watch, run_build_runs_in_its_own_process_group) {
  BuildResult r = run_build("ps -o pgid= -p $$; ps -o pgid= -p " + std::to_string(::getpid()));
  ASSERT_TRUE(r.ok) << r.output;
  std::istringstream in(r.output);
  long child_group = 0, our_group = 0;
  in >> child_group >> our_group;
  EXPECT_NE(child_group, our_group) << r.output;
}
