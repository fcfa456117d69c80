#!/usr/bin/env bash
# Fuzzes every parser that reads input the grader or kvc does not control (fuzz/): builds
# the libFuzzer targets with clang, AddressSanitizer and UndefinedBehaviorSanitizer in
# build-fuzz/, then runs each for SECONDS (default 20), two at a time, from seed corpora:
# fuzz/corpus/<target>/, the committed fixtures (plain and gzipped) and stages/manifest.json.
#
#   fuzz_fixture fuzz_fixture_gz fuzz_frames fuzz_answer fuzz_manifest fuzz_safetensors
#
# Exits 1 when a target crashes (a sanitizer report, an uncaught exception, a timeout of
# 10 s on one input, one allocation over 512 MB or 2 GB in all): the input that did it is kept in
# build-fuzz/findings/<target>/ and the target's log in build-fuzz/logs/. Inputs the
# fuzzer finds interesting are kept in build-fuzz/corpus/ for the next run; the committed
# seeds are never written.
#
# Time: from a clean build folder, the build takes about 110 CPU-seconds (about 1 minute
# on 2 idle cores; later runs rebuild only what changed), then 3 x SECONDS of fuzzing:
# with the default 20 s, about 2.5 minutes in all. Needs clang and its libFuzzer runtime
# (Debian: clang, libclang-rt-14-dev), installed here if missing.
#
# Usage: scripts/fuzz.sh [SECONDS]     (JOBS=N sets build jobs, default 2)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-20}"
jobs="${JOBS:-2}"
build="$root/build-fuzz"
targets=(fixture fixture_gz frames answer manifest safetensors)
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "fuzz: SECONDS must be a whole number > 0" >&2; exit 2; }

start=$(date +%s)
bash "$root/scripts/deps.sh" clang libclang-rt-14-dev
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (Debian package: clang)" >&2; exit 2; }

mkdir -p "$build/logs"
echo "fuzz: building the targets in build-fuzz/"
# -O1 with line tables: readable stack traces; asserts stay on (no NDEBUG).
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DKVCOURSE_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" >"$build/logs/build.log" 2>&1 &&
  cmake --build "$build" --target fuzz -j "$jobs" >>"$build/logs/build.log" 2>&1 ||
  { tail -n 30 "$build/logs/build.log" >&2; echo "fuzz: the build failed (log: build-fuzz/logs/build.log)" >&2; exit 2; }
built=$(date +%s)
echo "fuzz: built in $((built - start)) s"

# The working corpora: the committed seeds, copied, plus what earlier runs found.
small_fixtures=$(find "$root/fixtures" -name '*.json' -size -20k | sort)
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  cp "$root/fuzz/corpus/$t/"* "$build/corpus/$t/"
done
for f in $small_fixtures; do
  name="$(basename "$(dirname "$f")")-$(basename "$f")"
  cp "$f" "$build/corpus/fixture/$name"
  gzip -9 -n -c "$f" >"$build/corpus/fixture_gz/$name.gz"
done
cp "$root/stages/manifest.json" "$build/corpus/manifest/course-manifest.json"

max_len() {
  case "$1" in
    fixture | answer) echo 32768 ;;
    frames) echo 4096 ;;
    *) echo 16384 ;;
  esac
}

# run TARGET: fuzzes it for $seconds; its exit status is the fuzzer's. The targets that
# read JSON text mutate it with fuzz/json.dict's tokens too.
run() {
  local t="$1" dict=()
  [[ "$t" == fixture_gz || "$t" == frames ]] || dict=(-dict="$root/fuzz/json.dict")
  "$build/bin/fuzz_$t" "$build/corpus/$t" "${dict[@]}" -max_total_time="$seconds" -max_len="$(max_len "$t")" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
    >"$build/logs/$t.log" 2>&1
}

report() {
  local t="$1" status="$2" log="$build/logs/$1.log" runs speed
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [[ "$status" -eq 0 ]]; then
    printf 'fuzz: %-17s %s s, %10s runs (%s/s), no crash\n' "fuzz_$t" "$seconds" "$runs" "$speed"
  else
    printf 'fuzz: %-17s FAILED (status %s): input in build-fuzz/findings/%s/, log build-fuzz/logs/%s.log\n' \
      "fuzz_$t" "$status" "$t" "$t"
    grep -m 5 -E 'ERROR|SUMMARY|terminate|what\(\)' "$log" | sed 's/^/    /' || true
  fi
}

failed=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  a="${targets[i]}" b="${targets[i + 1]}"
  run "$a" & pa=$!
  run "$b" & pb=$!
  sa=0 sb=0
  wait "$pa" || sa=$?
  wait "$pb" || sb=$?
  report "$a" "$sa"
  report "$b" "$sb"
  [[ $sa -eq 0 && $sb -eq 0 ]] || failed=1
done
echo "fuzz: done in $(($(date +%s) - start)) s"
exit "$failed"
