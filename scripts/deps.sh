#!/usr/bin/env bash
# Installs the Debian packages the course needs, if any is missing. Idempotent: when
# everything is there it only checks, and installs nothing.
#   scripts/deps.sh [extra-package ...]
# Extras the scripts ask for: clang (determinism-check.sh); clang libclang-rt-14-dev
# (fuzz.sh: libFuzzer's runtime, which apt only recommends with clang); chromium
# (chart-check.sh). The tokenizer tests also need node and npm (Debian: nodejs, npm; any
# Node.js with npm will do), which are not installed here.
set -euo pipefail

packages=(g++ make cmake nlohmann-json3-dev libcli11-dev zlib1g-dev libgtest-dev libpcre2-dev
  libtinyxml2-dev libseccomp-dev "$@")
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
