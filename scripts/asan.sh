#!/usr/bin/env bash
# The grader under AddressSanitizer + UndefinedBehaviorSanitizer (preset asan, build-asan/):
# the parts that read untrusted input or manage processes (wire formats and parsers, the
# channel, the sandbox, judging, reports and watch mode, the command line) and the decode
# stages run through the reference. Left to the default build (scripts/test.sh): the
# model's and the tools' tests, the known-mistake catalogue and the course's self-check,
# the slow hand-out tests and the case generator's own tests (random_cases_test,
# fresh_cases_test): trusted course code, whose sanitized build and runs would cost more
# than half of this script's time and add no path untrusted input takes (fixture_io_test
# and inputs_test cover the parsing and checks of fresh cases).
# The test programs below are built in build-asan, and the suite runs there as in the
# default build, selected by label: `ctest --preset asan -L 'unit|process' -LE
# 'slow|network'` (two at a time; a failing test's output is printed). A program not
# built in build-asan is one unlabelled placeholder test there, which the selection leaves
# out. Then the sanitized grader grades one known mistake per stage.
#   scripts/asan.sh            build the tests below and run them
set -euo pipefail
cd "$(dirname "$0")/.."

tests=(tensor_test fixture_io_test protocol_test compare_test crash_test stages_test inputs_test report_test
  diagnose_test catalogue_file_test formats_test progress_test view_test watch_test cli_test loop_cli_test hostile_test
  sandbox_test results_document_test decode_course_test)

bash scripts/deps.sh
cmake --preset asan >/dev/null
cmake --build --preset asan --target "${tests[@]}"

failed=()
ctest --preset asan -L 'unit|process' -LE 'slow|network' || failed+=("the test suite (ctest --preset asan)")
programs=$(ctest --preset asan -N -L 'unit|process' -LE 'slow|network' | sed -n 's/^Total Tests: //p')

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# two_at_a_time FUNCTION ITEM...: FUNCTION ITEM for every item, two at once (the machine's
# two cores); returns when all have ended.
two_at_a_time() {
  local f=$1 item
  shift
  for item in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    "$f" "$item" &
  done
  wait
}
# The grader's judging and diagnosis of wrong answers, under the sanitizers: one known
# mistake per stage of stages/manifest.json, the first by name in the stage's folder
# (stages/<folder>/mistakes; the default build's runner: the grader is what is checked
# here), must fail its stage, and the stage must name that mistake and no other.
declare -A mistake_file=()
mistakes=()
while read -r _ folder; do
  for f in "stages/$folder/mistakes/"*.mistake; do
    [ -e "$f" ] || continue
    m=$(basename "$f" .mistake)
    mistakes+=("$m")
    mistake_file[$m]=$f
    break
  done
done < <(cmake -DMANIFEST=stages/manifest.json -DWHAT=folders -P autograders/manifest.cmake)
cmake --preset default >/dev/null
cmake --build --preset default --target "${mistakes[@]/#/runner-buggy-}" >/dev/null
# identified FILE: the ids in the "identified" list of the stage in the results FILE.
identified() {
  awk '/"identified": \[/ { inside = 1; next }
       inside && /^ *\],?$/ { inside = 0 }
       inside && /"id":/ { gsub(/[",]/, "", $2); print $2 }' "$1"
}
# field KEY M: the value of "KEY: value" in mistake M's file (read by apply-mistake, the
# catalogue files' one reader).
field() { build/bin/apply-mistake --field "$1" "${mistake_file[$2]}"; }
# grade_mistake M: the sanitized grader on mistake M's runner; its exit status to $logs/M.status.
grade_mistake() {
  local status=0
  build-asan/bin/grader --runner "build/bin/runner-buggy-$1" --stage "$(field stage "$1")" \
    --format json --output "$logs/$1.json" >"$logs/$1.log" 2>&1 || status=$?
  echo "$status" >"$logs/$1.status"
}
two_at_a_time grade_mistake "${mistakes[@]}"
for m in "${mistakes[@]}"; do
  stage=$(field stage "$m")
  id=$(field diagnosis "$m")
  status=$(cat "$logs/$m.status")
  named=$(identified "$logs/$m.json" 2>/dev/null | tr '\n' ' ')
  if [ "$status" = 1 ] && [ "$named" = "$id " ]; then
    echo "== grader on mistake $m ($stage): fails, names $id"
  else
    echo "== grader on mistake $m ($stage): FAILED: exit status $status (1 expected), named: ${named:-nothing} ($id expected)"
    cat "$logs/$m.log"
    failed+=("grader on $m")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "asan: failed: ${failed[*]}" >&2
  exit 1
fi
echo "asan: all ${programs} tests of ${#tests[@]} programs pass, and the grader names each of ${#mistakes[@]} mistakes alone"
