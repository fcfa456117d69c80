#!/usr/bin/env bash
# Measures the learner's loop: the time from saving a file to the verdict printed by
# `grader --watch`, for several edits, and reports the median of each stage; then a table
# of the medians against the goal (1 s), beside the CPU seconds of one grading of the
# stage (`grader --stage S`, grader and runner: user + system) and of one save's round
# (the rebuild and the grading, read from the watching grader's /proc/PID/stat).
#
#   scripts/latency.sh [--build-dir DIR] [--edits N] [--impl solved|reference|learner]
#                      [--jobs N] [STAGE...]
#
# STAGE defaults to every stage of stages/manifest.json. --impl picks what is edited and
# graded:
#   solved     (the default) the learner's loop of a learner who has finished: the
#              reference's files are put in src/ and adapters/ for the run, and the
#              learner's runner (runner-learner) is rebuilt and graded as `grader --watch`
#              does for a learner: compiled in the compile sandbox, with the learner's
#              flags and precompiled header. Every stage passes, so its whole grading is
#              measured. The files there before are put back afterwards.
#   reference  edits reference/*.cpp and grades runner-reference (built as the course's
#              own code, not as a learner's).
#   learner    edits src/ as it is and grades your runner (the skeleton fails fast: "not
#              implemented yet").
# The build folder (default build/) must hold a built grader; the rebuild is the real one,
# `cmake --build DIR --target runner-IMPL`. --jobs N is passed to every grader (runners at
# once per stage; default: the grader's).
#
# Each edit appends a comment line to the stage's file (e.g. src/decode.cpp), a real
# content change that the runner must be rebuilt for; each line carries this run's own
# number, so that no compiler cache can already hold the edited file. Every file the
# script changes is copied first and put back afterwards, however the script ends (except
# kill -9); the script then checks that it is byte for byte the original. Progress goes to
# a temporary file, so the learner's own is untouched. Exit status 0 whether or not the
# goal is met (a measurement).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build"
edits=7
impl=solved
jobs=()
stages=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --edits) edits=$2; shift 2 ;;
    --impl) impl=$2; shift 2 ;;
    --jobs) jobs=(--jobs "$2"); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) stages+=("$1"); shift ;;
  esac
done
grader="$build_dir/bin/grader"
[[ -x "$grader" ]] || { echo "latency: $grader is missing: build first (cmake --build $build_dir)" >&2; exit 2; }

[[ "$impl" == solved || "$impl" == reference || "$impl" == learner ]] ||
  { echo "latency: --impl solved, reference or learner" >&2; exit 2; }
runner_impl=$impl
[[ "$impl" == solved ]] && runner_impl=learner
# This run's number, in every probe line: a compiler cache has never seen these edits.
nonce="$$.$RANDOM$RANDOM"
if [[ ${#stages[@]} -eq 0 ]]; then
  # Every stage of stages/manifest.json, in course order.
  mapfile -t stages < <(cmake -DMANIFEST="$root/stages/manifest.json" -DWHAT=stages -P "$root/autograders/manifest.cmake" |
                        awk '{ print $2 }')
fi

work=$(mktemp -d)
solved=()      # --impl solved: the learner files replaced by the reference's for the run
file=""        # the learner file being edited
probes=0       # probe lines appended to it so far
grader_pid=""

restore() {
  if [[ -n "$grader_pid" ]]; then
    kill -TERM "$grader_pid" 2>/dev/null || true
    wait "$grader_pid" 2>/dev/null || true
    grader_pid=""
  fi
  if [[ -n "$file" ]]; then
    # Expected now: the original plus our probe lines. If someone else saved the file
    # meanwhile, only our probe lines are taken out and their change is kept.
    { cat "$work/backup"; for ((k = 1; k <= probes; k++)); do printf '// latency probe %d %s\n' "$k" "$nonce"; done; } >"$work/expected"
    if cmp -s "$work/expected" "$file"; then
      cat "$work/backup" >"$file"  # same inode, new mtime: the next build recompiles it
      cmp -s "$work/backup" "$file" || { echo "latency: could not restore $file (original: $work/backup)" >&2; exit 3; }
    else
      grep -Ev "^// latency probe [0-9]+ $nonce\$" "$file" >"$work/stripped" || true
      cat "$work/stripped" >"$file"
      echo "latency: $file changed during the run; removed only the probe lines" >&2
    fi
    file=""
  fi
}
# --impl solved: puts the learner's own files back. A file that is no longer the
# reference's was saved by someone else during the run: it is kept, and the learner's
# original is left beside it.
restore_solved() {
  local i learner
  for i in "${!solved[@]}"; do
    learner=${solved[$i]}
    if cmp -s "$root/reference/${learner##*/}" "$root/$learner"; then
      cat "$work/solved.$i" >"$root/$learner"
      cmp -s "$work/solved.$i" "$root/$learner" ||
        { echo "latency: could not restore $learner (original: $work/solved.$i)" >&2; exit 3; }
    else
      cp "$work/solved.$i" "$root/$learner.latency-original"
      echo "latency: $learner changed during the run; kept, the original is $learner.latency-original" >&2
    fi
  done
  solved=()
}
cleanup() {
  restore
  restore_solved
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The file a stage's learner edits (its first src/ file in stages/manifest.json), in src/
# or reference/.
learner_file() {
  local folder=src name
  [[ "$impl" == reference ]] && folder=reference
  name=$(cmake -DMANIFEST="$root/stages/manifest.json" -DWHAT=stage-files -P "$root/autograders/manifest.cmake" |
         awk -v slug="$1" '$1 == slug { for (i = 2; i <= NF; i++) if ($i ~ /^src\//) { sub(/^src\//, "", $i); print $i; exit } }')
  [[ -n "$name" ]] || { echo "latency: stage $1 has no src/ file in stages/manifest.json" >&2; exit 2; }
  echo "$root/$folder/$name"
}

# CPU seconds (user + system) a process and the children it waited for have used.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
# CPU seconds of one grading of stage $1: grader and runner (the runner is waited for).
grade_cpu() {
  # The file was just put back: the first run rebuilds the runner, the second is timed.
  KVCOURSE_PROGRESS="$work/progress.json" "$grader" --impl "$runner_impl" --stage "$1" --rebuild "${jobs[@]}" >/dev/null 2>&1 || true
  KVCOURSE_PROGRESS="$work/progress.json" /usr/bin/time -f '%U %S' -o "$work/time" \
    "$grader" --impl "$runner_impl" --stage "$1" --no-times "${jobs[@]}" >/dev/null 2>&1 || true
  awk '{ printf "%.2f\n", $1 + $2 }' "$work/time"
}

# Reads the grader's output (fd 3) until the footer that ends a verdict; keeps the
# "Rebuilt in ..." line in $last_timing. Fails after $1 seconds.
wait_verdict() {
  local line deadline=$((SECONDS + $1))
  while (( SECONDS < deadline )); do
    if IFS= read -r -t 1 line <&3; then
      [[ "$line" == Watching* ]] && last_timing="$line"
      [[ "$line" == Keys:* ]] && return 0
    fi
  done
  return 1
}

ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 + 0.5 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%d\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [[ "$impl" == solved ]]; then
  # The learner's files (src/*.cpp and adapters/adapters.cpp), each replaced by the
  # reference's file of the same name for the run.
  for learner in "$root"/src/*.cpp "$root"/adapters/adapters.cpp; do
    learner=${learner#"$root"/}
    name=${learner##*/}
    [[ -f "$root/reference/$name" ]] || { echo "latency: --impl solved needs reference/$name" >&2; exit 2; }
    cp "$root/$learner" "$work/solved.${#solved[@]}"
    solved+=("$learner")
    cat "$root/reference/$name" >"$root/$learner"
  done
fi

echo "Save -> verdict in watch mode, --impl $impl ${jobs[*]} ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), build dir $build_dir)"
medians=()
grade_cpus=()
round_cpus=()
for stage in "${stages[@]}"; do
  file=$(learner_file "$stage")
  edited=${file#"$root"/}
  [[ -f "$file" ]] || { echo "latency: $file is missing" >&2; exit 2; }
  cp "$file" "$work/backup"
  probes=0
  mkfifo "$work/out"
  KVCOURSE_PROGRESS="$work/progress.json" NO_COLOR=1 \
    "$grader" --impl "$runner_impl" --stage "$stage" --watch "${jobs[@]}" </dev/null >"$work/out" 2>&1 &
  grader_pid=$!
  exec 3<"$work/out"
  last_timing=""
  wait_verdict 900 || { echo "latency: no first verdict for $stage" >&2; exit 1; }

  samples=()
  timings=()
  cpus=()
  for ((i = 1; i <= edits; i++)); do
    sleep 0.5
    c0=$(cpu_of "$grader_pid")
    t0=$EPOCHREALTIME
    printf '// latency probe %d %s\n' "$i" "$nonce" >>"$file"
    probes=$i
    wait_verdict 120 || { echo "latency: no verdict after edit $i of $stage" >&2; exit 1; }
    t1=$EPOCHREALTIME
    cpus+=("$(awk -v a="$c0" -v b="$(cpu_of "$grader_pid")" 'BEGIN { printf "%.2f", b - a }')")
    samples+=("$(ms_between "$t0" "$t1")")
    timings+=("${last_timing#*). }")
  done
  exec 3<&-
  restore
  rm -f "$work/out"

  echo
  echo "$stage (edits to $edited):"
  for ((i = 0; i < edits; i++)); do
    printf '  edit %d: %5d ms, %5.2f CPU-s   (%s)\n' $((i + 1)) "${samples[$i]}" "${cpus[$i]}" "${timings[$i]}"
  done
  medians+=("$(printf '%s\n' "${samples[@]}" | median)")
  round_cpus+=("$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')")
  grade_cpus+=("$(grade_cpu "$stage")")
  printf '  median %d ms, min %d ms, max %d ms\n' \
    "${medians[-1]}" \
    "$(printf '%s\n' "${samples[@]}" | sort -n | head -1)" \
    "$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)"
done

goal=1000  # ms, save -> verdict, every stage
echo
printf '%-22s %10s %8s %5s %12s %12s\n' stage median goal "" "grade CPU-s" "round CPU-s"
for i in "${!stages[@]}"; do
  verdict="met"
  (( medians[i] <= goal )) || verdict="OVER"
  printf '%-22s %7d ms %5d ms %5s %12s %12s\n' "${stages[$i]}" "${medians[$i]}" "$goal" "$verdict" \
    "${grade_cpus[$i]}" "${round_cpus[$i]}"
done
echo "(load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
