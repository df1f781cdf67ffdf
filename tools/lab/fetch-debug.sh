#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the pinned kernel's debug vmlinux and its source, for
# `kjitctl report` (file:line, lcov) and genhtml; cached like the image.
#   OUTDIR/vmlinux-dbg      the vmlinux with DWARF (linux-image-$ABI-dbg;
#                           only that member is extracted, not the 280 MB of modules)
#   OUTDIR/linux-source/    the matching kernel tree (linux-source-$MAJOR)
# Usage: tools/lab/fetch-debug.sh [OUTDIR]   (default: $KJIT_BUILD/debug)
# Prints OUTDIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
MAJOR="$(echo "$ABI" | cut -d. -f1-2)"          # 6.1.0-56-cloud-amd64 -> 6.1
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
OUT="${1:-$BUILD/debug}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# apt-get download runs as _apt when root: give it a writable directory.
download() {
  local pkg="$1" deb tmp
  deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
  if [ -z "$deb" ]; then
    tmp="$(mktemp -d)"; chmod 777 "$tmp"
    (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2 || {
      apt-get update </dev/null >&2 && (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2; }
    mv "$tmp/${pkg}"_*.deb "$OUT/"
    rm -rf "$tmp"
    deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
  fi
  echo "$deb"
}

if [ ! -s "$OUT/vmlinux-dbg" ]; then
  deb="$(download "linux-image-$ABI-dbg")"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -O "./usr/lib/debug/boot/vmlinux-$ABI" > "$OUT/vmlinux-dbg.tmp"
  readelf -SW "$OUT/vmlinux-dbg.tmp" | grep -q ' \.debug_line ' \
    || { echo "fetch-debug: vmlinux-$ABI has no .debug_line" >&2; exit 1; }
  mv "$OUT/vmlinux-dbg.tmp" "$OUT/vmlinux-dbg"
  rm -f "$deb"        # 280 MB: the vmlinux is all we keep
fi

if [ ! -s "$OUT/linux-source/Makefile" ]; then
  deb="$(download "linux-source-$MAJOR")"
  rm -rf "$OUT/linux-source" "$OUT/src.tmp"
  mkdir -p "$OUT/src.tmp"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$OUT/src.tmp" "./usr/src/linux-source-$MAJOR.tar.xz"
  mkdir -p "$OUT/linux-source"
  tar -xJf "$OUT/src.tmp/usr/src/linux-source-$MAJOR.tar.xz" -C "$OUT/linux-source" --strip-components=1
  rm -rf "$OUT/src.tmp" "$deb"
fi
# A featureset flavour (rt) is built from debian/build/source_FEATURESET, the
# tree with the featureset's patches on top; linux-source has the tree
# without them, and Debian ships those patches only in its source package.
case "$ABI" in
  *-rt-*) echo "fetch-debug: $ABI is built with the PREEMPT_RT patches, which linux-source-$MAJOR" \
               "lacks: lines in the files they change (locking, scheduler, printk) may not match" >&2 ;;
esac
echo "$OUT"
