#!/usr/bin/env bash
# Prints the GitHub Classroom workflow of the learner's repository. Reads the stages on
# standard input, one "<number> <slug> <points>" line each (autograders/manifest.cmake),
# and makes each stage its own graded test (classroom-resources/autograding-command-grader),
# worth the stage's points; the reporter step sends the results to GitHub Classroom. The
# grader runs through sudo with --sandbox strict: as root on GitHub's runners the namespaces
# (or, failing them, the uid mode) isolate the learner's code (grader/SANDBOX.md), and a
# runner where neither holds fails the step rather than grading unprotected.
set -euo pipefail

mapfile -t stages
ids=()
cat <<'YAML'
# GitHub Classroom autograding: one test per stage of the course, each worth the stage's
# points. Made by scripts/export-learner.sh from stages/manifest.json; regenerate it there
# rather than editing it.
name: Autograding Tests
'on':
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Build the grader and your code
        run: |
          bash scripts/deps.sh
          cmake --preset default -DBUILD_TESTING=OFF
          cmake --build --preset default --target grader runner-learner
YAML
for line in "${stages[@]}"; do
  read -r number slug points <<<"$line"
  id="stage-${number}"
  ids+=("$id")
  cat <<YAML
      - name: Stage ${number} (${slug})
        id: ${id}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: Stage ${number} (${slug})
          command: sudo -E build/bin/grader --stage ${slug} --sandbox strict
          timeout: 5
          max-score: ${points}
YAML
done
echo "      - name: Autograding Reporter"
echo "        uses: classroom-resources/autograding-grading-reporter@v1"
echo "        env:"
for id in "${ids[@]}"; do
  upper="$(echo "$id" | tr '[:lower:]' '[:upper:]')"
  echo "          ${upper}_RESULTS: \"\${{steps.${id}.outputs.result}}\""
done
echo "        with:"
(IFS=,; echo "          runners: ${ids[*]}")
