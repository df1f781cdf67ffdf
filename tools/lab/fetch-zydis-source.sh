#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's zydis source package (for building the decoder/encoder into
# the kernel module; never vendored into the repo).
# Usage: tools/lab/fetch-zydis-source.sh [OUTDIR]   (default: $KJIT_BUILD/zydis-src)
# Prints the path of the unpacked source directory.
set -euo pipefail
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
OUT="${1:-$BUILD/zydis-src}"
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
FILES="Decoder.c DecoderData.c Encoder.c EncoderData.c SharedData.c Utils.c Zydis.c MetaInfo.c Mnemonic.c Register.c Segment.c"

verify() {
  local d="$1" f
  for f in $FILES; do
    [ -f "$d/src/$f" ] || { echo "fetch-zydis-source: missing src/$f in $d" >&2; return 1; }
  done
}

find_src() { find "$OUT" -mindepth 1 -maxdepth 1 -type d -name 'zydis-*' | sort | tail -n1; }

src="$(find_src)"
if [ -n "$src" ] && verify "$src" 2>/dev/null; then echo "$src"; exit 0; fi

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# deb-src entries for the same URIs/suites as debian.sources, in our own file.
srcfile=/etc/apt/sources.list.d/kjit-src.sources
base=/etc/apt/sources.list.d/debian.sources
need_update=0
if [ ! -f "$srcfile" ]; then
  [ -f "$base" ] || { echo "fetch-zydis-source: $base not found" >&2; exit 1; }
  # Copy every stanza, switching Types to deb-src (comments dropped).
  sed -e '/^#/d' -e 's/^Types:.*/Types: deb-src/' "$base" | $SUDO tee "$srcfile" >/dev/null
  need_update=1
fi
if ! apt-cache showsrc zydis 2>/dev/null | grep '^Package: zydis' >/dev/null; then need_update=1; fi
if [ "$need_update" = 1 ]; then $SUDO apt-get update -q </dev/null >&2; fi
command -v dpkg-source >/dev/null || $SUDO apt-get install -y dpkg-dev </dev/null >&2

# apt-get source as root: files written by _apt need a writable directory.
tmp="$(mktemp -d "$OUT/.fetch.XXXXXX")"; chmod 777 "$tmp"
(cd "$tmp" && apt-get source -q zydis </dev/null) >&2
d="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'zydis-*' | head -n1)"
[ -n "$d" ] || { echo "fetch-zydis-source: apt-get source produced no directory" >&2; exit 1; }
rm -rf "${OUT:?}/$(basename "$d")"
mv "$tmp"/* "$OUT"/
rm -rf "$tmp"
src="$(find_src)"
verify "$src"
echo "$src"
