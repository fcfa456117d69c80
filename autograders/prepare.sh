#!/usr/bin/env bash
# Builds a course tree for an autograder, once, when its image is made:
#   autograders/prepare.sh COURSE WORK
# copies the course tree (course-tree.txt) from COURSE (a checkout of the course, or the
# copy inside an autograder package; its hidden set fixtures-hidden/ too, when it has one)
# to WORK, configures WORK/build without tests and builds the grader
# and the learner's runner (with the skeleton). A submission then costs only its own files'
# compilation (grade_submission in lib.sh). The skeleton's files are kept in WORK/.skeleton
# so that every run starts from them. WORK must be the path the tree is used at: CMake
# records absolute paths.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: autograders/prepare.sh COURSE WORK" >&2
  exit 2
fi
course="$(cd "$1" && pwd)"
work="$2"
here="$(cd "$(dirname "$0")" && pwd)"

# shellcheck source=course-tree.sh
source "$here/course-tree.sh"

mkdir -p "$work"
# The course tree (course-tree.txt): never the fixture generator, which makes fixtures
# from the reference solution.
course_tree_copy "$course" "$work" || { echo "prepare: the course tree is incomplete" >&2; exit 2; }
# The hidden set (instructor-only, fixtures-hidden/): graded after the visible cases when the
# course tree has it (the course authors' repository and the packages made from it do).
if [ -d "$course/fixtures-hidden" ]; then cp -R "$course/fixtures-hidden" "$work/"; fi

# The skeleton's copy of every file a learner edits.
mapfile -t files < <(cmake -DMANIFEST="$work/stages/manifest.json" -DWHAT=files -P "$here/manifest.cmake")
for f in "${files[@]}"; do
  mkdir -p "$work/.skeleton/$(dirname "$f")"
  cp "$work/$f" "$work/.skeleton/$f"
done

cmake -S "$work" -B "$work/build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build "$work/build" --target grader runner-learner --parallel "$(nproc)"
# The answers, closed to every other uid: where namespaces are refused the runner and the
# learner's compile run as a uid of their own (grader/SANDBOX.md, "The uid mode"), which
# must not read the fixtures or run the programs in build/bin. The grader checks (and, as
# root, closes) them again at every run; this is for the copies it does not know about.
chmod o-rwx "$work/fixtures" "$work/build/bin"
if [ -d "$work/fixtures-hidden" ]; then chmod o-rwx "$work/fixtures-hidden"; fi
echo "prepare: the course is built in $work"
