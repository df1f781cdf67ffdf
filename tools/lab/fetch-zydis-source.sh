#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's zydis source package (for building the decoder/encoder into
# the kernel module; never vendored into the repo).
# Usage: tools/lab/fetch-zydis-source.sh [OUTDIR]   (default: $KJIT_BUILD/zydis-src)
# Env: KJIT_APT_ETC (default /etc/apt): where the deb entries are read.
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

# apt-get source with a private apt state: deb-src entries for the mirrors
# and suites of this machine's deb entries, in either format (one-line
# sources.list and *.list, deb822 *.sources), and lists and cache of its
# own.  Nothing under /etc/apt or /var/lib/apt is written, and no root is
# needed.
command -v dpkg-source >/dev/null || {
  echo "fetch-zydis-source: dpkg-source not found (apt-get install dpkg-dev)" >&2; exit 1; }
apt_etc="${KJIT_APT_ETC:-/etc/apt}"
apt_dir="$(mktemp -d "$OUT/.apt.XXXXXX")"
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/sources.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
for f in "$apt_etc/sources.list" "$apt_etc"/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
done > "$apt_dir/sources.d/system.list"
for f in "$apt_etc"/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  # Every stanza whose Types has deb, as deb-src (comments dropped).
  awk 'BEGIN { RS = ""; ORS = "\n\n" }
       { gsub(/(^|\n)#[^\n]*/, "") }
       /(^|\n)Types:[^\n]*[[:space:]]deb([[:space:]\n]|$)/ {
         sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' "$f"
done > "$apt_dir/sources.d/system.sources"
if [ ! -s "$apt_dir/sources.d/system.list" ] && [ ! -s "$apt_dir/sources.d/system.sources" ]; then
  echo "fetch-zydis-source: no deb entry in $apt_etc/sources.list, sources.list.d/*.list or *.sources:" \
       "apt cannot tell where Debian's zydis source is" >&2
  exit 1
fi
apt_opts=(-q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/sources.d"
          -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
          -o APT::Sandbox::User="$(id -un)")
apt-get "${apt_opts[@]}" update </dev/null >&2
tmp="$apt_dir/src"; mkdir "$tmp"
(cd "$tmp" && apt-get "${apt_opts[@]}" source zydis </dev/null) >&2
d="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'zydis-*' | head -n1)"
[ -n "$d" ] || { echo "fetch-zydis-source: apt-get source produced no directory" >&2; exit 1; }
rm -rf "${OUT:?}/$(basename "$d")"
mv "$tmp"/* "$OUT"/
src="$(find_src)"
verify "$src"
echo "$src"
