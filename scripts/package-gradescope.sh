#!/usr/bin/env bash
# Makes the Gradescope autograder package:
#   scripts/package-gradescope.sh [OUT]      (default: autograder.zip)
# setup.sh and run_autograder at the zip's root (autograders/gradescope/), the course as
# grading needs it in course/ (no reference/, tests/ or fixture generator; the hidden set
# fixtures-hidden/, whose tests Gradescope shows once grades are published), and the
# autograders' shared scripts in autograders/. With KVCOURSE_SANDBOX=strict set, the
# package grades only where the learner's code can be isolated (grader/SANDBOX.md). Upload it as a "Zip file upload" autograder.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-autograder.zip}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "package-gradescope: $root is not a git checkout; the package holds the files git tracks" >&2
  exit 2
fi

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/course" "$staging/autograders"
# The course tree (autograders/course-tree.txt), the hidden set and deps.sh.
# shellcheck source=../autograders/course-tree.sh
source "$root/autograders/course-tree.sh"
mapfile -t tree < <(course_tree_pathspecs)
(cd "$root" && git ls-files -z -- "${tree[@]}" fixtures-hidden scripts/deps.sh) |
  (cd "$root" && xargs -0 cp --parents -t "$staging/course")
cp "$root/autograders/lib.sh" "$root/autograders/prepare.sh" "$root/autograders/manifest.cmake" \
  "$root/autograders/course-tree.sh" "$root/autograders/course-tree.txt" "$staging/autograders/"
cp "$root/autograders/gradescope/setup.sh" "$root/autograders/gradescope/run_autograder" "$staging/"
chmod +x "$staging/setup.sh" "$staging/run_autograder" "$staging/autograders/prepare.sh"

extra=()
# KVCOURSE_SANDBOX=strict when packaging: every run refuses to grade unprotected.
if [ -n "${KVCOURSE_SANDBOX:-}" ]; then
  printf '%s\n' "$KVCOURSE_SANDBOX" >"$staging/sandbox-mode"
  extra=(sandbox-mode)
fi

rm -f "$out"
(cd "$staging" && cmake -E tar cf "$out" --format=zip setup.sh run_autograder course autograders "${extra[@]}")
echo "Wrote $out ($(du -h "$out" | cut -f1)): upload it to Gradescope as the autograder."
