# shellcheck shell=bash
# Shared by the autograders (exercism/run.sh, gradescope/run_autograder): putting a
# submission into a prepared course tree (prepare.sh) and grading it. Sourced, not run.

# place_submission SUBMISSION WORK: the learner's files (stages/manifest.json's "files")
# from SUBMISSION into WORK, over the skeleton's. A file is taken at its own path
# (src/kvcache.cpp) or, failing that, wherever in SUBMISSION a file of that name is, when
# there is exactly one: students zip folders in every layout. A file not found keeps the
# skeleton's, and the grader's "not implemented yet" names it. Says on stderr what it took.
place_submission() {
  local submission="$1" work="$2" here f name found count
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  mapfile -t files < <(cmake -DMANIFEST="$work/stages/manifest.json" -DWHAT=files -P "$here/manifest.cmake")
  for f in "${files[@]}"; do
    cp "$work/.skeleton/$f" "$work/$f"
    name="$(basename "$f")"
    if [ -f "$submission/$f" ]; then
      found="$submission/$f"
    else
      count="$(find "$submission" -type f -name "$name" -not -path '*/.*' | wc -l)"
      found=""
      if [ "$count" -eq 1 ]; then
        found="$(find "$submission" -type f -name "$name" -not -path '*/.*')"
      elif [ "$count" -gt 1 ]; then
        echo "autograder: $count files named $name in the submission; give it at $f" >&2
      fi
    fi
    if [ -n "$found" ]; then
      cp "$found" "$work/$f"  # a fresh time stamp: the rebuild compiles it
      echo "autograder: $f <- ${found#"$submission"/}" >&2
    else
      echo "autograder: $f is not in the submission; the skeleton's is graded" >&2
    fi
  done
}

# The sandbox mode the autograders grade with: $KVCOURSE_SANDBOX when the operator sets it
# (strict: refuse to grade unless the runner is isolated by namespaces or by a uid of its
# own; auto, the default: grade anyway and say in the results when the grade is not
# protected). Anything else is refused before grading.
sandbox_mode() {
  case "${KVCOURSE_SANDBOX:-auto}" in
    auto | strict | uid) echo "${KVCOURSE_SANDBOX:-auto}" ;;
    *)
      echo "autograder: KVCOURSE_SANDBOX=$KVCOURSE_SANDBOX is not auto, strict or uid" >&2
      return 1
      ;;
  esac
}

# grade_submission WORK FORMAT OUTPUT [grader options...]: rebuilds the learner's runner in
# WORK and grades it, writing the FORMAT document to OUTPUT, with the hidden set
# (WORK/fixtures-hidden) after the visible cases when WORK has one. Paths inside WORK are
# written relative to it (src/kvcache.cpp:3:1: ...), as the student knows them. The sandbox
# is $KVCOURSE_SANDBOX's (sandbox_mode; the grader refuses an invalid value, and the
# platform's script writes its error document). Returns the
# grader's status. No --random: an autograder has no reference solution to answer fresh
# cases with (grader/gen and reference/ stay out of its course tree).
grade_submission() {
  local work="$1" format="$2" output="$3" status document mode hidden=()
  shift 3
  if [ -d "$work/fixtures-hidden" ]; then hidden=(--hidden-fixtures "$work/fixtures-hidden"); fi
  mode="$(sandbox_mode)" || mode=invalid
  KVCOURSE_PROGRESS="$work/.grader/progress.json" NO_COLOR=1 \
    "$work/build/bin/grader" --rebuild --sandbox "$mode" --format "$format" -o "$output" "${hidden[@]}" "$@"
  status=$?
  if [ -s "$output" ]; then
    document="$(<"$output")"
    printf '%s\n' "${document//"$work/"/}" >"$output.relative" && mv "$output.relative" "$output"
  fi
  return $status
}
