#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the pinned Debian kernel image (without installing it) and extract:
#   OUTDIR/vmlinuz   bzImage
#   OUTDIR/config    kernel .config
#   OUTDIR/vmlinux   decompressed (stripped, unpatched) ELF from the bzImage
#   OUTDIR/image/    the unpacked .deb (lib/modules/... or usr/lib/modules/...
#                    for guest modules: image-modules.sh says which)
# Usage: tools/lab/fetch-kernel.sh [OUTDIR]   (default: $KJIT_BUILD/kernel)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
OUT="${1:-$BUILD/kernel}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [ -s "$OUT/vmlinux" ] && [ -s "$OUT/vmlinuz" ] && [ -s "$OUT/config" ] \
   && mods="$("$here/image-modules.sh" "$OUT/image" 2>/dev/null)" && [ -d "$mods/$ABI" ]; then
  echo "$OUT"; exit 0
fi

# A "+kcov" ABI is no Debian package: kcov-kernel.sh builds it (hours) and
# leaves it where this script leaves an image.  A fetch never starts that.
case "$ABI" in
  *+kcov) echo "fetch-kernel: $OUT holds no $ABI: that kernel is built, not fetched, by" \
               "tools/lab/kcov-kernel.sh, into its own lab cache (KJIT_BUILD, default build-$ABI/lab)," \
               "which every lab script then needs as KJIT_BUILD" >&2
          exit 1 ;;
esac

pkg="linux-image-$ABI"
deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
if [ -z "$deb" ] && [[ "$ABI" == *+deb13-* ]]; then
  # Debian 13's kernels are not in the host's (Debian 12) index: they come
  # through the lab's private trixie index, which leaves the host's alone.
  deb="$("$here/fetch-trixie-deb.sh" "$pkg" "$OUT")" || {
    newest="$("$here/newest-abi.sh" "$ABI" 2>/dev/null)" || newest=none
    echo "fetch-kernel: $pkg not fetched from Debian 13's index; the newest of its flavour there is $newest" >&2
    exit 1
  }
fi
if [ -z "$deb" ]; then
  # apt-get download runs as _apt when root: give it a writable directory.
  tmp="$(mktemp -d)"; chmod 777 "$tmp"
  if ! (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2 &&
     ! { apt-get update </dev/null >&2 && (cd "$tmp" && apt-get download "$pkg" </dev/null) >&2; }; then
    rm -rf "$tmp"
    # Debian's archive keeps only the last uploads of a line: a pin goes
    # stale.  Name its successor rather than leave apt's error alone.
    if apt-cache madison "$pkg" 2>/dev/null | grep -q ' Packages$'; then
      echo "fetch-kernel: $pkg is in Debian's index, but apt-get download failed (above)" >&2
    elif newest="$("$here/newest-abi.sh" "$ABI" 2>/dev/null)"; then
      echo "fetch-kernel: $pkg is no longer in Debian's index; the newest of its line is $newest:" \
           "set KJIT_KERNEL=$newest or update tools/kernel-version" >&2
    else
      echo "fetch-kernel: $pkg is not in Debian's index, nor any kernel of its line and flavour" >&2
    fi
    exit 1
  fi
  mv "$tmp/${pkg}"_*.deb "$OUT/"
  rm -rf "$tmp"
  deb="$(find "$OUT" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
fi

rm -rf "$OUT/image"
dpkg-deb -x "$deb" "$OUT/image"
cp "$OUT/image/boot/vmlinuz-$ABI" "$OUT/vmlinuz"
cp "$OUT/image/boot/config-$ABI" "$OUT/config"

# The bzImage payload is compressed as the flavour's config says (6.1
# cloud: a legacy LZ4 frame; 6.1 generic and rt: xz; 6.12: zstd).  Cut at
# the format's magic, as the kernel's scripts/extract-vmlinux does; the
# decompressors complain about the bytes after the stream, and the output
# is complete.
case "$(grep -E '^CONFIG_KERNEL_(LZ4|XZ|GZIP|ZSTD)=y' "$OUT/config")" in
  CONFIG_KERNEL_LZ4=y)  magic='\x02\x21\x4c\x18' unpack=(lz4 -dc) ;;
  CONFIG_KERNEL_XZ=y)   magic='\xfd\x37\x7a\x58\x5a' unpack=(xz -dc) ;;
  CONFIG_KERNEL_GZIP=y) magic='\x1f\x8b\x08' unpack=(gzip -dc) ;;
  CONFIG_KERNEL_ZSTD=y) magic='\x28\xb5\x2f\xfd' unpack=(zstd -dc) ;;
  *) echo "fetch-kernel: unknown bzImage compression in $OUT/config" >&2; exit 1 ;;
esac
off="$(LC_ALL=C grep -m1 -obUaP "$magic" "$OUT/vmlinuz" | cut -d: -f1)"
[ -n "$off" ] || { echo "fetch-kernel: ${unpack[0]} magic not found in vmlinuz" >&2; exit 1; }
tail -c +"$((off + 1))" "$OUT/vmlinuz" | "${unpack[@]}" > "$OUT/vmlinux.tmp.$$" 2>/dev/null || true
if [ "$(head -c4 "$OUT/vmlinux.tmp.$$" | od -An -tx1 | tr -d ' \n')" != "7f454c46" ]; then
  echo "fetch-kernel: decompressed payload is not ELF" >&2; exit 1
fi
# A truncated decompression would lose the section headers (at the end).
# (The section list is read whole first: grep -q would stop reading early,
# and readelf's SIGPIPE would fail the pipeline under pipefail.)
sections="$(readelf -SW "$OUT/vmlinux.tmp.$$" 2>/dev/null || true)"
grep -q ' \.text ' <<<"$sections" \
  || { echo "fetch-kernel: vmlinux has no readable .text section" >&2; exit 1; }
mv "$OUT/vmlinux.tmp.$$" "$OUT/vmlinux"
echo "$OUT"
