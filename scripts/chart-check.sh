#!/usr/bin/env bash
# Chart check: `kvc chart`'s SVG must render in a real browser. Draws the chart (synthetic
# weights), opens it in headless Chromium, takes a screenshot and checks with png-check
# (tests/tools/kvc/png_check.cpp) that the picture is not blank and that both lines are
# drawn (pixels of the cached line's blue and the uncached line's red).
#
# Needs Debian's chromium, which it does not install: `bash scripts/deps.sh chromium`.
# Builds kvc and png-check in build/ (the default preset) if needed.
#
# Usage: scripts/chart-check.sh        (MAX_POSITION=N sets the chart's range, default 128;
#                                       JOBS=N the build jobs)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
max_position="${MAX_POSITION:-128}"
cd "$root"

fail() {
  echo "chart-check: FAILED: $*" >&2
  exit 1
}

browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null; then
    browser="$candidate"
    break
  fi
done
[[ -n "$browser" ]] || fail "chromium not found (Debian package: chromium; bash scripts/deps.sh chromium)"

[[ -f "$build/CMakeCache.txt" ]] || cmake --preset default >/dev/null
cmake --build "$build" --target kvc png-check -j "${JOBS:-2}" >/dev/null ||
  fail "building kvc and png-check in $build"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "chart-check: kvc chart --max-position $max_position"
"$build/bin/kvc" chart --out "$tmp/why-cache.svg" --max-position "$max_position" ||
  fail "kvc chart did not write the chart"

# A fresh profile, no network services, no GPU: a plain render of a local file.
echo "chart-check: rendering with $browser (headless)"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-default-apps --hide-scrollbars --user-data-dir="$tmp/profile" \
  --window-size=820,560 --screenshot="$tmp/why-cache.png" "file://$tmp/why-cache.svg" \
  >"$tmp/chromium.log" 2>&1 || { tail -n 20 "$tmp/chromium.log" >&2; fail "chromium did not finish"; }
[[ -s "$tmp/why-cache.png" ]] || { tail -n 20 "$tmp/chromium.log" >&2; fail "chromium wrote no screenshot"; }

# The colours of the two lines (tools/kvc/chart.cpp).
"$build/bin/png-check" "$tmp/why-cache.png" --color 1f6fb4 --color d62728 ||
  fail "the screenshot of the chart looks blank or misses a line"
echo "chart-check: passed"
