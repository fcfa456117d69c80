#!/usr/bin/env bash
# The autograders graded where they are deployed: in a real container, as root, where the
# kernel's namespaces are refused (grader/SANDBOX.md, "Per platform").
#   scripts/container-check.sh [exercism|gradescope|all]      (default: all)
# Builds a Debian 12 base image with debootstrap (no registry is needed; the tarball is
# cached in build/container/), then the Exercism image from autograders/exercism/Dockerfile
# and a Gradescope image from the package scripts/package-gradescope.sh makes, laid out as
# Gradescope does (/autograder/source, submission, results). Each is run as its platform
# runs it (Exercism: --network none, the solution read-only, /tmp a tmpfs, the output
# folder bound, --cpus 1) on five submissions: the reference solution (pass), the skeleton
# (fail), a syntax error (the compile fails), the skeleton plus code that reads the
# fixtures at run time, and the skeleton plus an #include of a fixture. The last two must
# score nothing and say why (Permission denied, No such file). Each run's wall time is
# printed, and the sandbox mode each results document names. Needs podman and
# debootstrap (Debian packages), and root. Exit status 0 when every check holds.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
which_ones="${1:-all}"
cache="$root/build/container"
base=localhost/debian:bookworm
mkdir -p "$cache"

if [ "$(id -u)" -ne 0 ]; then
  echo "container-check: run as root (the platforms run their containers as root)" >&2
  exit 2
fi
for tool in podman debootstrap python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "container-check: $tool is missing (apt-get install podman debootstrap runc)" >&2
    exit 2
  fi
done

# podman's default rlimits (nofile, nproc) may exceed this machine's hard limits, which the
# runtime then refuses to set: keep the machine's.
export CONTAINERS_CONF="$cache/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"

failures=0
check() {  # check DESCRIPTION CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then echo "  ok    $1"; else
    echo "  FAIL  $1"
    failures=$((failures + 1))
  fi
}

# --- the base image ------------------------------------------------------------------
if ! podman image exists "$base"; then
  if [ ! -f "$cache/bookworm-minbase.tar" ]; then
    echo "container-check: debootstrap --variant=minbase bookworm (a few minutes, once)"
    rm -rf "$cache/rootfs"
    debootstrap --variant=minbase bookworm "$cache/rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log"
    tar -C "$cache/rootfs" -cf "$cache/bookworm-minbase.tar" .
    rm -rf "$cache/rootfs"
  fi
  podman import "$cache/bookworm-minbase.tar" "$base" >/dev/null
fi
# crun refuses a machine whose cgroups are in hybrid mode; runc does not.
runtime=()
if ! podman run --rm --network none "$base" true 2>/dev/null; then
  if command -v runc >/dev/null && podman run --runtime runc --rm --network none "$base" true; then
    runtime=(--runtime runc)
  else
    echo "container-check: podman cannot run a container here (see the error above)" >&2
    exit 2
  fi
fi

# Docker's default seccomp profile, as far as namespaces go: podman's, with clone allowed
# only without namespace flags (Docker's rule), clone3 answering ENOSYS and unshare EPERM.
docker_like="$cache/docker-like-seccomp.json"
python3 - /usr/share/containers/seccomp.json "$docker_like" <<'EOF'
import json, sys
profile = json.load(open(sys.argv[1]))
for rule in profile["syscalls"]:
    rule["names"] = [n for n in rule["names"] if n not in ("clone", "clone3", "unshare")]
profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
profile["syscalls"] += [
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": 0x7E020000, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
]
json.dump(profile, open(sys.argv[2], "w"), indent=1)
EOF
docker_opts=(--security-opt "seccomp=$docker_like")

# The course as git has it (what the images are built from), without build folders.
stage_course() {  # stage_course DIR
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$root" && git ls-files -z -- CMakeLists.txt CMakePresets.json include model cmake tools grader stages fixtures \
    fixtures-hidden src adapters autograders scripts/deps.sh) | (cd "$root" && xargs -0 cp --parents -t "$1")
}

# The stage the submissions are graded on: the manifest's first, whose adapter
# run_cache_plan the run-time theft replaces, and its first two visible fixtures, the
# files the thefts try to read.
probe=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stages"][0]["slug"])' \
  "$root/stages/manifest.json")
mapfile -t probe_files < <(cd "$root/fixtures/$probe" && ls | head -2)

# --- the submissions -----------------------------------------------------------------
solutions="$cache/solutions"
rm -rf "$solutions"
mkdir -p "$solutions"/{reference,skeleton,broken,steal-run,steal-compile}/{src,adapters}
for f in kvcache decode paged prefix_cache batching; do cp "$root/reference/$f.cpp" "$solutions/reference/src/$f.cpp"; done
cp "$root/reference/adapters.cpp" "$solutions/reference/adapters/adapters.cpp"
cp "$root/src/kvcache.cpp" "$solutions/skeleton/src/kvcache.cpp"
printf 'this is not C++\n' >"$solutions/broken/src/kvcache.cpp"
# Run time: the skeleton, whose run_cache_plan reads the fixtures wherever an image keeps
# them, and answers with what it could read (a full copy of a fixture would be an answer).
python3 - "$root/adapters/adapters.cpp" "$solutions/steal-run/adapters/adapters.cpp" "$probe" \
  "${probe_files[0]}" "${probe_files[1]}" <<'EOF'
import sys
text = open(sys.argv[1]).read()
stage, first, second = sys.argv[3], sys.argv[4], sys.argv[5]
paths = [f"/tmp/kvcourse/fixtures/{stage}/{second}",
         f"/tmp/kvcourse/fixtures-hidden/{stage}/{first}",
         f"/opt/test-runner/course/fixtures/{stage}/{second}",
         f"/opt/test-runner/prebuilt/fixtures/{stage}/{second}",
         f"/autograder/kvcourse/fixtures/{stage}/{second}",
         f"/autograder/kvcourse/fixtures-hidden/{stage}/{first}",
         f"/autograder/source/course/fixtures/{stage}/{second}"]
start = text.index("std::vector<CacheSnapshot> run_cache_plan(")
end = text.index("\n}\n", start) + 3
theft = r'''std::vector<CacheSnapshot> run_cache_plan(const std::vector<CacheOp>& plan) {
  (void)plan;
  std::string report;
  for (const char* path : {PATHS}) {
    std::FILE* f = std::fopen(path, "rb");
    report += std::string(path) + ": " + (f ? "STOLEN" : std::strerror(errno)) + "; ";
    if (f) std::fclose(f);
  }
  throw std::runtime_error("theft: " + report);
}
'''
theft = theft.replace("PATHS", ",\n                           ".join(f'"{p}"' for p in paths))
out = text[:start] + theft + text[end:]
out = out.replace('#include "course/adapters.hpp"\n', '#include "course/adapters.hpp"\n\n#include <cerrno>\n#include <cstdio>\n#include <cstring>\n#include <stdexcept>\n#include <string>\n', 1)
open(sys.argv[2], "w").write(out)
EOF
# Compile time: the skeleton with a fixture included (Exercism's path; Gradescope's below).
printf '#include "/tmp/kvcourse/fixtures/%s/%s"\n' "$probe" "${probe_files[0]}" >"$solutions/steal-compile/adapters/adapters.cpp"
cat "$root/adapters/adapters.cpp" >>"$solutions/steal-compile/adapters/adapters.cpp"
# Gradescope's copy: the include of its own path.
mkdir -p "$solutions/steal-compile-gs/src"
printf '#include "/autograder/kvcourse/fixtures/%s/%s"\n' "$probe" "${probe_files[0]}" >"$solutions/steal-compile-gs/src/kvcache.cpp"
cat "$root/src/kvcache.cpp" >>"$solutions/steal-compile-gs/src/kvcache.cpp"
chmod -R a+rX "$solutions"

# What a results document says, in one line: python3 FIELD... on the JSON.
field() {  # field FILE EXPRESSION (d is the document)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

seconds_since() { python3 -c "import time,sys; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$1"; }

# --- Exercism --------------------------------------------------------------------------
exercism() {
  echo "== Exercism image (autograders/exercism/Dockerfile, FROM $base)"
  stage_course "$cache/exercism-context"
  local t0
  t0="$(date +%s.%N)"
  podman build "${runtime[@]}" --network host --build-arg BASE="$base" -t localhost/kvcourse-exercism \
    -f "$cache/exercism-context/autograders/exercism/Dockerfile" "$cache/exercism-context" >"$cache/exercism-build.log" 2>&1 ||
    { tail -20 "$cache/exercism-build.log"; return 1; }
  echo "  built in $(seconds_since "$t0") s (log: build/container/exercism-build.log)"
  # run_exercism NAME SLUG [podman options...]: the results in $cache/out/NAME/results.json
  run_exercism() {
    local name="$1" slug="$2" out="$cache/out/exercism-$1" t0
    shift 2
    rm -rf "$out"
    mkdir -p "$out"
    chmod 0777 "$out"  # as Exercism's output folder may be: writable by the runner's uid too
    t0="$(date +%s.%N)"
    podman run "${runtime[@]}" --rm --network none --cpus 1 --tmpfs /tmp:rw,exec "$@" \
      --mount "type=bind,src=$solutions/${name%%+*},dst=/solution,ro" --mount "type=bind,src=$out,dst=/output" \
      localhost/kvcourse-exercism "$slug" /solution/ /output/ >"$out.log" 2>&1 || true
    local took
    took="$(seconds_since "$t0")"
    if [ ! -s "$out/results.json" ]; then
      echo "  FAIL  $name: no results.json ($(tail -3 "$out.log"))"
      failures=$((failures + 1))
      return
    fi
    echo "  run   $name ($slug): status $(field "$out/results.json" "d['status']"), $(field "$out/results.json" \
      "sum(t['status']=='pass' for t in d['tests'])") of $(field "$out/results.json" "len(d['tests'])") tests pass, sandbox $(field \
      "$out/results.json" "d.get('sandbox',{}).get('mode','(none)')"), $took s"
  }
  local r
  run_exercism reference "$probe"
  r="$cache/out/exercism-reference/results.json"
  [ -s "$r" ] && {
    check "the reference passes" "$([ "$(field "$r" "d['status']")" = pass ] && echo 0 || echo 1)"
    check "podman's defaults: the uid mode, named in results.json" "$([ "$(field "$r" "d['sandbox']['mode']")" = uid ] && echo 0 || echo 1)"
    check "the compile was sandboxed (podman's defaults allow its namespaces: no /proc)" "$(field "$r" "d['sandbox'].get('compile','')" | grep -q "compile sandbox: namespaces" && echo 0 || echo 1)"
  }
  run_exercism reference+all kv-cache
  r="$cache/out/exercism-reference+all/results.json"
  [ -s "$r" ] && check "the reference passes every stage (one CPU)" "$([ "$(field "$r" "d['status']")" = pass ] && echo 0 || echo 1)"
  run_exercism skeleton "$probe"
  r="$cache/out/exercism-skeleton/results.json"
  [ -s "$r" ] && check "the skeleton fails" "$([ "$(field "$r" "d['status']")" = fail ] && echo 0 || echo 1)"
  run_exercism broken "$probe"
  r="$cache/out/exercism-broken/results.json"
  [ -s "$r" ] && check "a syntax error is an error" "$([ "$(field "$r" "d['status']")" = error ] && echo 0 || echo 1)"
  run_exercism steal-run "$probe"
  r="$cache/out/exercism-steal-run/results.json"
  [ -s "$r" ] && {
    check "reading the fixtures at run time passes nothing" "$([ "$(field "$r" "sum(t['status']=='pass' for t in d['tests'])")" = 0 ] && echo 0 || echo 1)"
    check "... and read nothing (no STOLEN; Permission denied)" "$(! grep -q STOLEN "$r" && grep -q 'Permission denied' "$r"; echo $?)"
  }
  run_exercism steal-compile "$probe"
  r="$cache/out/exercism-steal-compile/results.json"
  [ -s "$r" ] && check "including a fixture fails the compile: No such file" "$([ "$(field "$r" "d['status']")" = error ] && grep -q "${probe_files[0]}: No such file or directory" "$r"; echo $?)"
  # As under Docker's default profile: no namespaces at all, so the compile too runs as
  # the runner's uid.
  run_exercism reference+docker "$probe" "${docker_opts[@]}"
  r="$cache/out/exercism-reference+docker/results.json"
  [ -s "$r" ] && {
    check "Docker's profile: the reference passes in the uid mode" "$([ "$(field "$r" "d['status'] + ' ' + d['sandbox']['mode']")" = "pass uid" ] && echo 0 || echo 1)"
    check "... and the compile ran as the runner's uid" "$(field "$r" "d['sandbox'].get('compile','')" | grep -q "compile sandbox: uid" && echo 0 || echo 1)"
  }
  run_exercism steal-run+docker "$probe" "${docker_opts[@]}"
  r="$cache/out/exercism-steal-run+docker/results.json"
  [ -s "$r" ] && check "Docker's profile: reading the fixtures passes nothing, reads nothing" "$([ "$(field "$r" "sum(t['status']=='pass' for t in d['tests'])")" = 0 ] && ! grep -q STOLEN "$r" && grep -q 'Permission denied' "$r"; echo $?)"
  run_exercism steal-compile+docker "$probe" "${docker_opts[@]}"
  r="$cache/out/exercism-steal-compile+docker/results.json"
  [ -s "$r" ] && check "Docker's profile: including a fixture fails the compile: Permission denied" "$([ "$(field "$r" "d['status']")" = error ] && grep -q "${probe_files[0]}: Permission denied" "$r"; echo $?)"
  # The full isolation, and strict, under podman.
  run_exercism reference+unmask "$probe" --security-opt 'unmask=/proc/*'
  r="$cache/out/exercism-reference+unmask/results.json"
  [ -s "$r" ] && check "--security-opt unmask=/proc/*: the namespaces" "$([ "$(field "$r" "d['sandbox']['mode']")" = namespaces ] && echo 0 || echo 1)"
  run_exercism steal-run+strict "$probe" -e KVCOURSE_SANDBOX=strict
  r="$cache/out/exercism-steal-run+strict/results.json"
  [ -s "$r" ] && check "KVCOURSE_SANDBOX=strict grades in the uid mode" "$([ "$(field "$r" "d['sandbox']['mode']")" = uid ] && echo 0 || echo 1)"
}

# --- Gradescope ------------------------------------------------------------------------
gradescope() {
  echo "== Gradescope image (scripts/package-gradescope.sh, setup.sh, FROM $base)"
  local ctx="$cache/gradescope-context" t0
  rm -rf "$ctx"
  mkdir -p "$ctx/source"
  bash "$root/scripts/package-gradescope.sh" "$cache/autograder.zip" >/dev/null
  (cd "$ctx/source" && cmake -E tar xf "$cache/autograder.zip")
  cat >"$ctx/Dockerfile" <<EOF
FROM $base
COPY source /autograder/source
RUN bash /autograder/source/setup.sh && cp /autograder/source/run_autograder /autograder/run_autograder
EOF
  t0="$(date +%s.%N)"
  podman build "${runtime[@]}" --network host -t localhost/kvcourse-gradescope "$ctx" >"$cache/gradescope-build.log" 2>&1 ||
    { tail -20 "$cache/gradescope-build.log"; return 1; }
  echo "  built in $(seconds_since "$t0") s (log: build/container/gradescope-build.log)"
  run_gradescope() {  # run_gradescope NAME [podman options...]
    local name="$1" out="$cache/out/gradescope-$1" t0 took
    shift
    rm -rf "$out"
    mkdir -p "$out"
    t0="$(date +%s.%N)"
    podman run "${runtime[@]}" --rm --network none --cpus 1 "$@" \
      --mount "type=bind,src=$solutions/${name%%+*},dst=/autograder/submission,ro" \
      --mount "type=bind,src=$out,dst=/autograder/results" localhost/kvcourse-gradescope /autograder/run_autograder \
      >"$out.log" 2>&1 || true
    took="$(seconds_since "$t0")"
    if [ ! -s "$out/results.json" ]; then
      echo "  FAIL  $name: no results.json ($(tail -3 "$out.log"))"
      failures=$((failures + 1))
      return
    fi
    echo "  run   $name: score $(field "$out/results.json" "d['score']"), sandbox $(field "$out/results.json" \
      "d.get('extra_data',{}).get('sandbox',{}).get('mode','(none)')"), $took s"
  }
  local r total
  total="$(python3 -c "import json,sys; print(round(sum(s['points'] for s in json.load(open(sys.argv[1]))['stages'])))" "$root/stages/manifest.json")"
  run_gradescope reference
  r="$cache/out/gradescope-reference/results.json"
  [ -s "$r" ] && {
    check "the reference scores every point ($total)" "$([ "$(field "$r" "round(d['score'])")" = "$total" ] && echo 0 || echo 1)"
    check "podman's defaults: the uid mode, in output and extra_data" "$([ "$(field "$r" "d['extra_data']['sandbox']['mode']")" = uid ] && grep -q 'sandbox: uid' "$r"; echo $?)"
  }
  run_gradescope skeleton
  r="$cache/out/gradescope-skeleton/results.json"
  [ -s "$r" ] && check "the skeleton scores 0" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && echo 0 || echo 1)"
  run_gradescope broken
  r="$cache/out/gradescope-broken/results.json"
  [ -s "$r" ] && check "a syntax error scores 0 (does not compile)" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && grep -q 'does not compile' "$r"; echo $?)"
  run_gradescope steal-run
  r="$cache/out/gradescope-steal-run/results.json"
  [ -s "$r" ] && check "reading the fixtures at run time scores 0 and reads nothing" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && ! grep -q STOLEN "$r" && grep -q 'Permission denied' "$r"; echo $?)"
  run_gradescope steal-compile-gs
  r="$cache/out/gradescope-steal-compile-gs/results.json"
  [ -s "$r" ] && check "including a fixture scores 0: No such file" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && grep -q "${probe_files[0]}: No such file or directory" "$r"; echo $?)"
  run_gradescope steal-run+docker "${docker_opts[@]}"
  r="$cache/out/gradescope-steal-run+docker/results.json"
  [ -s "$r" ] && check "Docker's profile: reading the fixtures scores 0, reads nothing" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && ! grep -q STOLEN "$r" && grep -q 'Permission denied' "$r"; echo $?)"
  run_gradescope steal-compile-gs+docker "${docker_opts[@]}"
  r="$cache/out/gradescope-steal-compile-gs+docker/results.json"
  [ -s "$r" ] && check "Docker's profile: including a fixture scores 0: Permission denied" "$([ "$(field "$r" "round(d['score'])")" = 0 ] && grep -q "${probe_files[0]}: Permission denied" "$r"; echo $?)"
}

case "$which_ones" in
  exercism) exercism ;;
  gradescope) gradescope ;;
  all) exercism && gradescope ;;
  *)
    echo "usage: scripts/container-check.sh [exercism|gradescope|all]" >&2
    exit 2
    ;;
esac
echo "container-check: $failures failed check(s)"
[ "$failures" -eq 0 ]
