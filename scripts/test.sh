#!/usr/bin/env bash
# Builds everything and runs the whole test suite (the course's self-check included).
# Idempotent and incremental. With --preset asan, the same under AddressSanitizer and
# UndefinedBehaviorSanitizer. The tests labelled "slow" (they build a whole copy of the
# course: the learner's export, the autograders) are left out; .ci/run runs them, and so
# does `ctest --preset default -L slow`.
set -euo pipefail
cd "$(dirname "$0")/.."

preset=default
if [ "${1:-}" = "--preset" ]; then preset="$2"; fi

bash scripts/deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -LE slow
