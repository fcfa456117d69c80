#!/usr/bin/env bash
# Downloads GPT-2 small from Hugging Face (openai-community/gpt2, a pinned revision) into
# DIR and checks every file's size and sha256:
#   DIR/model.safetensors   548,105,171 bytes: the weights (F32), for kvc --weights
#   DIR/vocab.json            1,042,301 bytes  } the tokenizer, for kvc --tokenizer DIR
#   DIR/merges.txt              456,318 bytes  }
# Files already there with the right checksum are kept. Needs curl (or wget) and about
# 550 MB of space.
#
# Usage: scripts/get-gpt2.sh DIR
# Then:  build/bin/kvc generate --weights DIR/model.safetensors --tokenizer DIR \
#          --prompt "The meaning of life is" --max-new-tokens 40
set -euo pipefail

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: scripts/get-gpt2.sh DIR" >&2
  exit 2
fi
dir="$1"
revision=607a30d783dfa663caf39e06633721c8d4cfcd7e
base="https://huggingface.co/openai-community/gpt2/resolve/$revision"

# name, size in bytes, sha256: the values Hugging Face publishes for this revision
# (vocab.json and merges.txt are byte for byte OpenAI's encoder.json and vocab.bpe).
files=(
  "vocab.json 1042301 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
  "merges.txt 456318 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
  "model.safetensors 548105171 248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707"
)

fail() {
  echo "get-gpt2: $*" >&2
  exit 1
}

if command -v curl >/dev/null; then
  fetch() { curl --fail --location --retry 3 --output "$2" "$1"; }
elif command -v wget >/dev/null; then
  fetch() { wget --tries=3 --output-document="$2" "$1"; }
else
  fail "neither curl nor wget is installed (Debian: apt-get install curl)"
fi
command -v sha256sum >/dev/null || fail "sha256sum not found (Debian package: coreutils)"

# ok FILE SIZE SHA256: true when FILE has that size and checksum.
ok() {
  [[ -f "$1" ]] && [[ "$(stat -c %s "$1")" == "$2" ]] &&
    [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$3" ]]
}

mkdir -p "$dir"
for entry in "${files[@]}"; do
  read -r name size sha <<<"$entry"
  target="$dir/$name"
  if ok "$target" "$size" "$sha"; then
    echo "get-gpt2: $target is already there"
    continue
  fi
  echo "get-gpt2: downloading $name ($size bytes)"
  fetch "$base/$name" "$target.part" || { rm -f "$target.part"; fail "could not download $base/$name"; }
  if ! ok "$target.part" "$size" "$sha"; then
    actual="$(stat -c %s "$target.part") bytes, sha256 $(sha256sum "$target.part" | cut -d' ' -f1)"
    rm -f "$target.part"
    fail "$name is not the expected file ($actual; expected $size bytes, sha256 $sha)"
  fi
  mv "$target.part" "$target"
done
echo "get-gpt2: GPT-2 small is in $dir"
