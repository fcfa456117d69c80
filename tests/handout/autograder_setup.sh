#!/usr/bin/env bash
# CTest's setup of the autograder tests (fixture "handout_autograder"): packages the
# Gradescope autograder, unpacks it into OUT/gradescope/source as Gradescope would, and runs
# its setup.sh with OUT/gradescope as the root. The built course, OUT/gradescope/kvcourse,
# serves the Exercism tests too.
#   autograder_setup.sh SOURCE_DIR OUT
set -euo pipefail
src="$1"
out="$2"
rm -rf "$out"
mkdir -p "$out/gradescope/source"
bash "$src/scripts/package-gradescope.sh" "$out/autograder.zip"
(cd "$out/gradescope/source" && cmake -E tar xf "$out/autograder.zip")
test -x "$out/gradescope/source/run_autograder"
KVCOURSE_GRADESCOPE_ROOT="$out/gradescope" bash "$out/gradescope/source/setup.sh"
