#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: installs the
# course's packages and builds the course (grader, model, the skeleton's runner) so that a
# submission compiles only its own files. The image must be a Debian 12 or Ubuntu 24.04
# base (CMake 3.25 or newer). $KVCOURSE_GRADESCOPE_ROOT replaces /autograder (for tests).
set -euo pipefail
root="${KVCOURSE_GRADESCOPE_ROOT:-/autograder}"
source_dir="$root/source"

bash "$source_dir/course/scripts/deps.sh"
bash "$source_dir/autograders/prepare.sh" "$source_dir/course" "$root/kvcourse"
# The package's copy of the course holds the answers: closed to the runner's uid (the uid
# mode, grader/SANDBOX.md); the built course's are closed by prepare.sh.
chmod o-rwx "$source_dir/course"
