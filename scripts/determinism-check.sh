#!/usr/bin/env bash
# Determinism check, part (c) of model/DETERMINISM.md: the logits of GPT-2 small
# (synthetic weights) must have the same bits whatever the compiler, the optimisation
# level, the vector instructions and the thread count; and so must the graded results of
# the reference solution, whoever compiles it.
#
# Builds kvc three ways:
#   clang     the `clang` CMake preset (clang++, RelWithDebInfo -O2, build-clang/)
#   gcc -O0   build-det-gcc-O0/ (-O0 -D_GLIBCXX_ASSERTIONS)
#   gcc -O3 -march=x86-64-v4      build-det-gcc-O3/, where the CPU has AVX-512 (the
#             compiler may then vectorise any loop with it); plain -O3 elsewhere
# and also uses the default preset's build/bin/kvc (GCC -O2, baseline x86-64) if it exists.
# It runs `kvc digest --synthetic --seed 1 --tokens <prompt>` with each, with 1 and 2
# threads, by forward() and by a cached one-token-at-a-time decode (--decode), then the
# gcc -O3 build again with the kernels' narrower vector paths (--vector-path sse2, and avx2
# where the CPU has it), and fails unless every digest is the same. Each run digests GPT-2
# and its variants (model/variants.hpp: grouped-query with 4, 2 and 1 K/V heads, rotary,
# rotary with a StreamingLLM window, latent attention), a line each. (The -O0 build is
# slow: it skips the 1-thread decode.)
# Then it builds the reference runner (reference/ behind the runner main) twice: with
# clang, and as a learner's debug build compiles their own files (the reference's files at
# -O0 -D_GLIBCXX_ASSERTIONS, in the gcc -O3 tree), and grades both against the committed
# fixtures, the hidden set included, with the default build's grader (build/bin/grader, built if missing): the
# learner's attention loops and the reference's are compiled by whatever compiler and flags
# build the runner, and each runner must pass every case.
#
# Usage: scripts/determinism-check.sh        (from anywhere; JOBS=N sets build jobs)
set -euo pipefail

root="${KVC_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
jobs="${JOBS:-2}"
prompt="464,2068,7586,21831,18045,625,262,16931"  # "The quick brown fox jumps over the lazy"
variants="gpt2,gqa-4,gqa-2,gqa-1,rotary,streaming-2-3,latent"  # streaming: 3 of the 8 evicted
cd "$root"

fail() {
  echo "determinism-check: FAILED: $*" >&2
  exit 1
}

# build NAME DIR [cmake args...]: configure DIR (unless it is a preset build) and build
# kvc and the reference runner.
names=()
binaries=()
build() {
  local name="$1" dir="$2"
  shift 2
  local log="$root/$dir/determinism-check.log"
  echo "determinism-check: building kvc ($name) in $dir"
  mkdir -p "$root/$dir"
  if [[ "$name" == clang ]]; then
    cmake --preset clang >"$log" 2>&1 || { tail -n 30 "$log" >&2; fail "configuring $name (log: $log)"; }
  else
    cmake -S "$root" -B "$root/$dir" -DBUILD_TESTING=OFF "$@" >"$log" 2>&1 ||
      { tail -n 30 "$log" >&2; fail "configuring $name (log: $log)"; }
  fi
  local targets=(kvc)
  [[ "$name" == clang || "$name" == "gcc -O3"* ]] && targets+=(runner-reference)
  cmake --build "$root/$dir" --target "${targets[@]}" -j "$jobs" >>"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; fail "building $name (log: $log)"; }
  names+=("$name")
  binaries+=("$root/$dir/bin/kvc")
}

command -v clang++ >/dev/null || fail "clang++ not found (Debian package: clang)"
command -v g++ >/dev/null || fail "g++ not found"

build clang build-clang
build "gcc -O0" build-det-gcc-O0 -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -D_GLIBCXX_ASSERTIONS"
o3="gcc -O3"
o3_flags=-O3
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  o3="gcc -O3 -march=x86-64-v4"
  o3_flags="-O3 -march=x86-64-v4"
else
  echo "determinism-check: this CPU has no AVX-512: the -O3 build is for baseline x86-64"
fi
build "$o3" build-det-gcc-O3 -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=$o3_flags" "-DKVCOURSE_RUNNER_SOURCE_OPTIONS=-O0;-g;-D_GLIBCXX_ASSERTIONS"
if [[ -x "$root/build/bin/kvc" ]]; then
  names+=("default build (gcc -O2)")
  binaries+=("$root/build/bin/kvc")
else
  echo "determinism-check: no build/bin/kvc (default preset); not checking it"
fi

reference=""
reference_label=""
count=0
n_variants=$(tr ',' '\n' <<<"$variants" | wc -l)
# show LABEL DIGESTS: the run's label, then its "variant digest" lines.
show() {
  printf 'determinism-check: %s\n' "$1"
  sed 's/^/determinism-check:     /' <<<"$2"
}
for i in "${!names[@]}"; do
  for run in "1 forward" "2 forward" "1 decode" "2 decode"; do
    read -r threads mode <<<"$run"
    # The -O0 build is slow: its one-token-at-a-time decode runs with 2 threads only.
    [[ "${names[$i]}" == "gcc -O0" && "$run" == "1 decode" ]] && continue
    args=(digest --synthetic --seed 1 --tokens "$prompt" --threads "$threads" --variant "$variants")
    [[ "$mode" == decode ]] && args+=(--decode)
    label="${names[$i]}, $threads thread(s), $mode"
    digest="$("${binaries[$i]}" "${args[@]}")" || fail "kvc failed ($label)"
    show "$label" "$digest"
    count=$((count + n_variants))
    if [[ -z "$reference" ]]; then
      reference="$digest"
      reference_label="$label"
    elif [[ "$digest" != "$reference" ]]; then
      fail "the digests of $label differ from those of $reference_label (above): the logits' bits depend on the build or the thread count"
    fi
  done
done
# The kernels' narrower vector paths (kvc picks the widest the CPU has), with the gcc -O3
# build: each must give the same bits too.
paths=(sse2)
grep -qw avx2 /proc/cpuinfo 2>/dev/null && paths+=(avx2)
for path in "${paths[@]}"; do
  for mode in forward decode; do
    args=(digest --synthetic --seed 1 --tokens "$prompt" --threads 2 --vector-path "$path" --variant "$variants")
    [[ "$mode" == decode ]] && args+=(--decode)
    label="$o3, 2 thread(s), $mode, $path"
    digest="$("$root/build-det-gcc-O3/bin/kvc" "${args[@]}")" || fail "kvc failed ($label)"
    show "$label" "$digest"
    count=$((count + n_variants))
    [[ "$digest" == "$reference" ]] ||
      fail "the digests of $label differ from those of $reference_label (above): the logits' bits depend on the vector path"
  done
done
echo "determinism-check: $count digests identical, $n_variants models:"
show "the digests" "$reference"

# The reference runner, compiled by clang and learner-style, graded against the committed
# fixtures.
grader="$root/build/bin/grader"
if [[ ! -x "$grader" ]]; then
  echo "determinism-check: building the grader (default preset, build/)"
  { cmake --preset default && cmake --build --preset default --target grader; } >"$root/build-grader.log" 2>&1 ||
    { tail -n 30 "$root/build-grader.log" >&2; fail "building the grader (log: $root/build-grader.log)"; }
fi
grade() {
  local label="$1" runner="$2"
  local out="$root/$3/determinism-grades.json"
  local passed="passes all"
  local start=$SECONDS
  local args=(--runner "$runner" --all --hidden-fixtures "$root/fixtures-hidden" --timeout 60)
  # This check is about numbers. Stage speed's verdict (the result named "speed") is a
  # timing, which neither an -O0 build nor two gradings at once on two cores hold to: it
  # may fail here; every other result must pass. In the results document each case's keys
  # are in order, its "name" before its "status".
  if ! "$grader" "${args[@]}" --format json --output "$out" >/dev/null 2>&1; then
    local failed
    failed=$(awk '/^ *"name": /{name=$2} /^ *"status": /{if ($2 !~ /^"passed"/) print name}' "$out" |
      grep -v '^"speed",\?$' || true)
    if [[ -n "$failed" ]] || ! grep -q '"stages"' "$out"; then
      "$grader" "${args[@]}" 2>&1 | tail -n 40 >&2 || true
      fail "the reference runner built by $label does not pass every case against the committed fixtures ($out)"
    fi
    passed="passes every result but stage speed's timing verdict, of"
  fi
  local cases
  cases=$(grep -o '"total": *[0-9]*' "$out" | awk -F: '{n += $2} END {print n}')
  printf 'determinism-check: %-48s %s %s cases (%d s)\n' "reference runner, $label" "$passed" "$cases" $((SECONDS - start))
}
# Both at once: each grade() runs in its own subshell, where fail ends only that one.
grade clang "$root/build-clang/bin/runner-reference" build-clang &
clang_grade=$!
grade "learner-style (files at gcc -O0)" "$root/build-det-gcc-O3/bin/runner-reference" build-det-gcc-O3 &
learner_grade=$!
graded=0
wait "$clang_grade" || graded=1
wait "$learner_grade" || graded=1
[[ $graded == 0 ]] || fail "a reference runner does not pass every case (above)"
echo "determinism-check: passed: $count digests identical (GPT-2 $(head -n 1 <<<"$reference" | cut -d' ' -f2) and $((n_variants - 1)) variants); the reference runner built by clang and learner-style (its files at -O0) passes every stage (stage speed's timing aside)"
