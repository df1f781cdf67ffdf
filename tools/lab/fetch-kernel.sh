#!/bin/bash
# Fetch the pinned Debian kernel image (without installing it) and extract:
#   OUTDIR/vmlinuz   bzImage
#   OUTDIR/config    kernel .config
#   OUTDIR/vmlinux   decompressed (stripped, unpatched) ELF from the bzImage
#   OUTDIR/image/    the unpacked .deb (lib/modules/... for guest modules)
# Usage: tools/lab/fetch-kernel.sh [OUTDIR]   (default: $KJIT_BUILD/kernel)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ABI="$(tr -d '[:space:]' < "$here/../kernel-version")"
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
OUT="${1:-$BUILD/kernel}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [ -s "$OUT/vmlinux" ] && [ -s "$OUT/vmlinuz" ] && [ -s "$OUT/config" ] \
   && [ -d "$OUT/image/lib/modules/$ABI" ]; then
  echo "$OUT"; exit 0
fi

pkg="linux-image-$ABI"
deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
if [ -z "$deb" ]; then
  # apt-get download runs as _apt when root: give it a writable directory.
  tmp="$(mktemp -d)"; chmod 777 "$tmp"
  (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2 || {
    apt-get update </dev/null >&2 && (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2; }
  mv "$tmp/${pkg}"_*.deb "$OUT/"
  rm -rf "$tmp"
  deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
fi

rm -rf "$OUT/image"
dpkg-deb -x "$deb" "$OUT/image"
cp "$OUT/image/boot/vmlinuz-$ABI" "$OUT/vmlinuz"
cp "$OUT/image/boot/config-$ABI" "$OUT/config"

# The bzImage payload is a legacy LZ4 frame (magic 02 21 4c 18). Cut there.
off="$(grep -obUaP '\x02\x21\x4c\x18' "$OUT/vmlinuz" | head -n1 | cut -d: -f1)"
[ -n "$off" ] || { echo "fetch-kernel: LZ4 magic not found in vmlinuz" >&2; exit 1; }
# lz4 complains about the trailing bytes after the frame; the output is complete.
tail -c +"$((off + 1))" "$OUT/vmlinuz" | lz4 -dc > "$OUT/vmlinux.tmp.$$" 2>/dev/null || true
if [ "$(head -c4 "$OUT/vmlinux.tmp.$$" | od -An -tx1 | tr -d ' \n')" != "7f454c46" ]; then
  echo "fetch-kernel: decompressed payload is not ELF" >&2; exit 1
fi
# A truncated decompression would lose the section headers (at the end).
readelf -SW "$OUT/vmlinux.tmp.$$" | grep -q ' \.text ' \
  || { echo "fetch-kernel: vmlinux has no readable .text section" >&2; exit 1; }
mv "$OUT/vmlinux.tmp.$$" "$OUT/vmlinux"
echo "$OUT"
