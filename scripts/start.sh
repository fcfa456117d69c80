#!/usr/bin/env bash
# Quick start for a learner: install what is missing, build, and grade your code (the
# first stage you have not passed yet). Run it again at any time; it only redoes what
# changed. Arguments go to the grader, e.g. scripts/start.sh --stage SLUG --watch
# It builds only what grading needs (the grader, the model and your runner); the test
# suite is built by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target grader runner-learner
echo
# The example names the course's first stage (stages/manifest.json).
first=$(sed -n 's/^ *"slug": *"\([^"]*\)".*/\1/p' stages/manifest.json | head -n 1)
echo "Built. The grader is build/bin/grader; from here on, for example:"
echo "  build/bin/grader --stage $first --watch"
echo
exec build/bin/grader "$@"
