#!/usr/bin/env bash
# Exercism test runner (the test runner interface, results.json version 3):
#   run.sh SLUG INPUT_DIR OUTPUT_DIR
# Takes the learner's files from INPUT_DIR (src/kvcache.cpp, ... as stages/manifest.json
# names them), compiles only them into the prebuilt course, grades, and writes
# OUTPUT_DIR/results.json. SLUG is the exercise: a stage's slug grades that stage, any
# other slug every stage. Exit status 0 whenever results.json was written, whatever the
# tests say; 1 only when it could not be.
#
# The course is prebuilt in the image (Dockerfile) at $KVCOURSE_PREBUILT
# (/opt/test-runner/prebuilt), built for the path $KVCOURSE_WORK (/tmp/kvcourse) where each
# run copies it: /tmp is the one place a run may write. When $KVCOURSE_WORK already holds
# a built course (a test, a second run), it is used as it is.
set -uo pipefail

if [ $# -ne 3 ]; then
  echo "usage: run.sh SLUG INPUT_DIR OUTPUT_DIR" >&2
  exit 2
fi
slug="$1"
input="${2%/}"
output="${3%/}"
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${KVCOURSE_WORK:-/tmp/kvcourse}"
prebuilt="${KVCOURSE_PREBUILT:-/opt/test-runner/prebuilt}"
results="$output/results.json"
# shellcheck source=../lib.sh
source "$here/lib.sh"

# When the runner itself cannot grade: a version 3 error document, still exit 0.
fail_document() {
  local message="${1//\\/\\\\}"
  message="${message//\"/\\\"}"
  printf '{"version": 3, "status": "error", "message": "%s", "tests": []}\n' "$message" >"$results"
}

mkdir -p "$output" || exit 1
if [ ! -x "$work/build/bin/grader" ]; then
  # The decode stages' weights file (475 MiB) is only read: linked to the prebuilt's, not copied.
  if [ ! -d "$prebuilt" ] || ! { mkdir -p "$work" && tar -C "$prebuilt" --exclude=./build/weights -cf - . | tar -C "$work" -xf - &&
    ln -sfn "$prebuilt/build/weights" "$work/build/weights"; }; then
    fail_document "The test runner is broken: no prebuilt course at $prebuilt. Please report it."
    exit 0
  fi
fi
if [ ! -d "$input" ]; then
  fail_document "The test runner got no solution folder ($input)."
  exit 0
fi

place_submission "$input" "$work"
stages=(--all)
if grep -qF "\"slug\": \"$slug\"" "$work/stages/manifest.json"; then stages=(--stage "$slug"); fi
grade_submission "$work" exercism "$results" "${stages[@]}"
status=$?
# 0 pass, 1 fail or does not compile, 2 could not grade: the grader wrote results.json in
# every case (an error document for 2).
if [ -s "$results" ]; then exit 0; fi
fail_document "The test runner failed (grader status $status) without writing results."
exit 0
