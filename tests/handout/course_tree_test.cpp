// The one list of what a course tree contains (autograders/course-tree.txt): its paths
// exist, and the Exercism Dockerfile, which cannot read it while the image is built,
// copies exactly those paths into course/ (prepare.sh then takes the "!" paths back out,
// reading the list). The other packagers read the list themselves; the slow tests build
// what they make.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using testing_support::read_file;
using testing_support::source_dir;

struct CourseTree {
  std::set<std::string> paths, excluded;
};

std::string trim(std::string s) {
  const size_t hash = s.find('#');
  if (hash != std::string::npos) s.resize(hash);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

CourseTree read_course_tree() {
  CourseTree tree;
  std::stringstream in(read_file(source_dir() / "autograders" / "course-tree.txt"));
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty()) continue;
    if (line[0] == '!')
      tree.excluded.insert(line.substr(1));
    else
      tree.paths.insert(line);
  }
  return tree;
}

// The sources of the Dockerfile's COPY lines into course/ (COPY A B course/ copies A and B
// to course/A and course/B; COPY A course/A copies A). Other destinations are left out.
std::set<std::string> dockerfile_course_copies(std::vector<std::string>& problems) {
  std::set<std::string> out;
  std::stringstream in(read_file(source_dir() / "autograders" / "exercism" / "Dockerfile"));
  for (std::string line; std::getline(in, line);) {
    std::stringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.size() < 3 || w[0] != "COPY") continue;
    const std::string dest = w.back();
    if (dest.rfind("course/", 0) != 0) continue;
    for (size_t i = 1; i + 1 < w.size(); ++i) {
      if (dest != "course/" && dest != "course/" + w[i])
        problems.push_back(line + ": copies " + w[i] + " to " + dest + ", not course/" + w[i]);
      out.insert(w[i]);
    }
  }
  return out;
}

}  // namespace

TEST(course_tree, every_listed_path_exists) {
  const CourseTree tree = read_course_tree();
  ASSERT_FALSE(tree.paths.empty());
  for (const std::string& p : tree.paths)
    EXPECT_TRUE(std::filesystem::exists(source_dir() / p)) << p;
  for (const std::string& p : tree.excluded) {
    bool inside = false;
    for (const std::string& q : tree.paths) inside = inside || p.rfind(q + "/", 0) == 0;
    EXPECT_TRUE(inside) << "!" << p << " is not inside a listed folder";
  }
}

TEST(course_tree, never_holds_the_solution_or_the_tests) {
  const CourseTree tree = read_course_tree();
  for (const char* p : {"reference", "tests", "fixtures-hidden", "grader/gen"})
    EXPECT_FALSE(tree.paths.count(p)) << p;
  EXPECT_TRUE(tree.excluded.count("grader/gen"));
  // The stages' catalogues of mistakes are edits of the reference solution.
  EXPECT_TRUE(tree.excluded.count("stages/*/mistakes"));
  EXPECT_TRUE(tree.excluded.count("stages/*/golden"));
}

// A COPY of stages/ would carry the stages' mistakes into the public image's layer, where
// prepare.sh's removal cannot reach: the build context leaves them out (.dockerignore).
TEST(course_tree, the_image_build_never_sees_a_patterned_exclusion) {
  const CourseTree tree = read_course_tree();
  std::set<std::string> ignored;
  std::stringstream in(read_file(source_dir() / ".dockerignore"));
  for (std::string line; std::getline(in, line);)
    if (!trim(line).empty()) ignored.insert(trim(line));
  for (const std::string& p : tree.excluded) {
    if (p.find('*') != std::string::npos) {
      EXPECT_TRUE(ignored.count(p)) << "!" << p << " is not in .dockerignore";
    }
  }
}

TEST(course_tree, exercism_dockerfile_copies_the_listed_paths) {
  const CourseTree tree = read_course_tree();
  std::vector<std::string> problems;
  std::set<std::string> copied = dockerfile_course_copies(problems);
  for (const std::string& p : problems) ADD_FAILURE() << p;
  // The hidden set is the Exercism image's own extra, as it is Gradescope's.
  copied.erase("fixtures-hidden");
  for (const std::string& p : tree.paths)
    EXPECT_TRUE(copied.count(p)) << "autograders/exercism/Dockerfile does not copy " << p
                                 << " (autograders/course-tree.txt lists it): add `COPY " << p
                                 << " course/" << p << "`";
  for (const std::string& p : copied)
    EXPECT_TRUE(tree.paths.count(p)) << "autograders/exercism/Dockerfile copies " << p
                                     << ", which autograders/course-tree.txt does not list";
}
