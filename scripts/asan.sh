#!/usr/bin/env bash
# The grader under AddressSanitizer + UndefinedBehaviorSanitizer (preset asan, build-asan/):
# the parts that read untrusted input or manage processes (wire formats and parsers, the
# channel, the sandbox, judging, reports and watch mode, the command line) and the decode
# stages run through the reference. Each test program runs on its own; the known-mistake
# catalogue and the slow hand-out tests are left to the default build (scripts/test.sh),
# since they would build and grade 70 more runners a second time for no new code path.
#   scripts/asan.sh            build the tests below and run them
set -euo pipefail
cd "$(dirname "$0")/.."

tests=(tensor_test fixture_io_test protocol_test compare_test stages_test inputs_test report_test random_cases_test
  diagnose_test formats_test progress_test view_test watch_test cli_test loop_cli_test hostile_test
  sandbox_test results_document_test decode_course_test fresh_cases_test)

bash scripts/deps.sh
cmake --preset asan >/dev/null
cmake --build --preset asan --target "${tests[@]}"
failed=()
for t in "${tests[@]}"; do
  echo "== $t"
  if ! build-asan/bin/"$t" --gtest_brief=1; then failed+=("$t"); fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "asan: failed: ${failed[*]}" >&2
  exit 1
fi
echo "asan: all ${#tests[@]} test programs pass"
