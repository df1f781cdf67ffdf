#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the pinned kernel's debug vmlinux and its source, for
# `kjitctl report` (file:line, lcov) and genhtml; cached like the image.
#   OUTDIR/vmlinux-dbg      the vmlinux with DWARF (linux-image-$ABI-dbg;
#                           only that member is extracted, not the 280 MB of modules)
#   OUTDIR/modules/         the debug .ko of each module KJIT_DEBUG_MODULES names
#                           (space-separated, e.g. "ext4 jbd2"), at their paths
#                           under /usr/lib/debug/lib/modules/$ABI (kernel/fs/ext4/ext4.ko),
#                           where kjit-report looks beside --vmlinux
#   OUTDIR/linux-source/    the matching kernel tree (linux-source-$MAJOR),
#                           unless KJIT_DEBUG_SOURCE=0
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
  # Debian 13's packages come through the lab's private trixie index.
  case "$ABI" in *+deb13-*) "$here/fetch-trixie-deb.sh" "$pkg" "$OUT"; return ;; esac
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

# The debug files are the kernel's own: a cache of another ABI (after the
# pin moved, or a KJIT_BUILD shared by two) is dropped, never used.
if [ -e "$OUT/vmlinux-dbg" ] && [ "$(cat "$OUT/abi" 2>/dev/null)" != "$ABI" ]; then
  rm -rf "$OUT/vmlinux-dbg" "$OUT/modules"
fi

# Module names as the kernel spells them ('_'); files may use '-'.
missing_modules=()
for m in ${KJIT_DEBUG_MODULES:-}; do
  [ -n "$(find "$OUT/modules" \( -name "$m.ko" -o -name "${m//_/-}.ko" \) 2>/dev/null | head -n1)" ] \
    || missing_modules+=("$m")
done
if [ ! -s "$OUT/vmlinux-dbg" ] || [ ${#missing_modules[@]} -gt 0 ]; then
  deb="$(download "linux-image-$ABI-dbg")"
  dbgmods="./usr/lib/debug/lib/modules/$ABI"
  members=()
  for m in "${missing_modules[@]}"; do members+=("$dbgmods/*/$m.ko" "$dbgmods/*/${m//_/-}.ko"); done
  rm -rf "$OUT/dbg.tmp"; mkdir -p "$OUT/dbg.tmp"
  # One pass over the 280 MB: the vmlinux and the modules asked for (a
  # pattern that matches nothing is not an error; a module found nowhere is).
  dpkg-deb --fsys-tarfile "$deb" \
    | tar -x -C "$OUT/dbg.tmp" --wildcards "./usr/lib/debug/boot/vmlinux-$ABI" "${members[@]}" 2>"$OUT/dbg.err" || true
  vml="$OUT/dbg.tmp/usr/lib/debug/boot/vmlinux-$ABI"
  sections="$(readelf -SW "$vml" 2>/dev/null || true)"   # whole: no SIGPIPE under pipefail
  grep -q ' \.debug_line ' <<<"$sections" \
    || { echo "fetch-debug: vmlinux-$ABI has no .debug_line" >&2; cat "$OUT/dbg.err" >&2; exit 1; }
  [ -s "$OUT/vmlinux-dbg" ] || mv "$vml" "$OUT/vmlinux-dbg"
  if [ -d "$OUT/dbg.tmp/$dbgmods" ]; then
    mkdir -p "$OUT/modules"
    cp -a "$OUT/dbg.tmp/$dbgmods"/. "$OUT/modules"/
  fi
  rm -rf "$OUT/dbg.tmp" "$OUT/dbg.err"
  for m in "${missing_modules[@]}"; do
    [ -n "$(find "$OUT/modules" \( -name "$m.ko" -o -name "${m//_/-}.ko" \) 2>/dev/null | head -n1)" ] \
      || { echo "fetch-debug: linux-image-$ABI-dbg has no $m.ko" >&2; exit 1; }
  done
  rm -f "$deb"        # 280 MB: the vmlinux and the few modules are all we keep
  echo "$ABI" > "$OUT/abi"
fi

if [ "${KJIT_DEBUG_SOURCE:-1}" != 0 ] && [ ! -s "$OUT/linux-source/Makefile" ]; then
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
