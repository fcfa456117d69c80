#!/usr/bin/env bash
# Writes the learner's repository: the course as a class hands it to students, ready to
# push (to a GitHub Classroom template, for example).
#   scripts/export-learner.sh OUT
# OUT must not exist yet, or be empty. It gets the course tree (autograders/course-tree.txt:
# the skeleton src/ and adapters/, include/, model/, tools/, grader/ without gen/, the
# fixture generator, stages/, the visible fixtures), the learner's scripts, its README, CI
# script and GitHub Classroom workflow
# (handout/learner/). It never gets reference/, tests/, grader/gen/ or a hidden case.
# Files are taken as the working tree has them, for every path git tracks.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/export-learner.sh OUT   (OUT: a new or empty folder)" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "export-learner: $out exists and is not empty; give a new folder" >&2
  exit 2
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "export-learner: $root is not a git checkout; the export copies the files git tracks" >&2
  exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# What the learner gets from the course, as tracked by git: the course tree
# (autograders/course-tree.txt) and the learner's scripts.
# shellcheck source=../autograders/course-tree.sh
source "$root/autograders/course-tree.sh"
mapfile -t shared < <(course_tree_pathspecs)
(cd "$root" && git ls-files -z -- "${shared[@]}" .gitignore scripts/start.sh scripts/deps.sh) |
  (cd "$root" && xargs -0 cp --parents -t "$out")

# The learner's own files: README, test script, CI.
learner="$root/handout/learner"
cp "$learner/README.md" "$out/README.md"
cp "$learner/test.sh" "$out/scripts/test.sh"
mkdir -p "$out/.ci"
cp "$learner/ci-run" "$out/.ci/run"
chmod +x "$out/scripts/"*.sh "$out/.ci/run"

# GitHub Classroom: one graded test per stage, worth the stage's points (manifest.json).
stages="$(cmake -DMANIFEST="$root/stages/manifest.json" -DWHAT=stages -P "$root/autograders/manifest.cmake")"
mkdir -p "$out/.github/workflows"
bash "$learner/classroom-workflow.sh" <<<"$stages" >"$out/.github/workflows/classroom.yml"

# Nothing of the solution or of the instructor's side may have slipped in.
for forbidden in reference tests grader/gen fixtures-hidden "stages/*/gen"; do
  # compgen -G: a "*" in the path matches any stage's folder.
  if compgen -G "$out/$forbidden" >/dev/null; then
    echo "export-learner: $forbidden/ ended up in the export; refusing" >&2
    rm -rf "$out"
    exit 1
  fi
done
echo "Exported the learner's repository to $out ($(find "$out" -type f | wc -l) files)."
