#!/usr/bin/env bash
# Builds everything (the grader, your runner, the model's kvc tool) and grades every
# stage. Exit status 0 when every stage passes, 1 while some case fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
build/bin/grader --all
