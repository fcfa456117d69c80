#!/usr/bin/env bash
# Installs the Debian packages the course needs, if any is missing. Idempotent: when
# everything is there it only checks, and installs nothing.
#   scripts/deps.sh [--tests] [extra-package ...]
# --tests (scripts/test.sh): also Node.js and npm (Debian: nodejs, npm), with which the tokenizer tests (label
# network) fetch and run their reference encoder, and chromium, in which html_report_cli_test renders
# `grader --report`. They are installed when they can be: if
# apt-get cannot install them, this says so and goes on, and scripts/test.sh leaves those
# tests out, saying why. Extras the scripts ask for: clang (determinism-check.sh); clang
# libclang-rt-14-dev (fuzz.sh: libFuzzer's runtime, which apt only recommends with clang);
# chromium (chart-check.sh); ccache (.ci/run).
set -euo pipefail

# Any Node.js with npm will do (NodeSource's nodejs package brings its own npm, and
# Debian's npm package would conflict with it): they are asked of apt only when the
# commands are missing.
test_packages=()
if [ "${1:-}" = "--tests" ]; then
  command -v node >/dev/null || test_packages+=(nodejs)
  command -v npm >/dev/null || test_packages+=(npm)
  # The HTML report's test opens it in headless Chromium (it is skipped, saying so, without).
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || test_packages+=(chromium)
  shift
fi
packages=(g++ make cmake nlohmann-json3-dev libcli11-dev zlib1g-dev libgtest-dev libpcre2-dev
  libtinyxml2-dev libseccomp-dev "$@")

# missing PACKAGE...: those of the packages not installed.
missing() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}
mapfile -t needed < <(missing "${packages[@]}")
mapfile -t wanted < <(missing "${test_packages[@]}")
[ ${#needed[@]} -eq 0 ] && [ ${#wanted[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
apt_install() { $sudo apt-get install -y -qq --no-install-recommends "$@"; }
if [ ${#needed[@]} -gt 0 ]; then
  echo "Installing: ${needed[*]}"
  $sudo apt-get update -qq
  apt_install "${needed[@]}"
elif ! $sudo apt-get update -qq; then
  echo "deps.sh: apt-get update failed; trying to install ${wanted[*]} from the package lists already here" >&2
fi
if [ ${#wanted[@]} -gt 0 ]; then
  echo "Installing for the tests: ${wanted[*]}"
  if ! apt_install "${wanted[@]}"; then
    echo "deps.sh: could not install ${wanted[*]}: the tests labelled network (the tokenizer against" \
      "its npm reference) will not run, nor the HTML report's in a browser (skipped)" >&2
  fi
fi
