#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prints the lab's initramfs for the flavour, building it first when it is
# missing or stale: make-initramfs.sh with the kernel package's storage
# modules and the lab's fixes of the kernel's own bugs (kernel-fixes.sh).
# run-guest.sh and bench/lib/boot.sh boot it.
# Usage: tools/lab/initramfs.sh KERNEL_DIR   (fetch-kernel.sh's OUTDIR)
# Env: KJIT_BUILD (lab cache, default ./build/lab), KJIT_LAB_FIXES=0
#   (without the kernel fixes).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
kdir="$1"
initrd="$BUILD/initramfs.cpio.gz"
# KJIT_LAB_FIXES=0: an initramfs without the kernel fixes, for the one boot
# that makes the facts they are built from (extract-kallsyms.sh).
if [ "${KJIT_LAB_FIXES:-1}" = 0 ]; then
  initrd="$BUILD/initramfs-nofixes.cpio.gz"
  fixes_out=""
else
  fixes_out="$("$here/kernel-fixes.sh" "$BUILD/kernel-fixes" "$kdir")"
fi
fixes=()
[ -z "$fixes_out" ] || mapfile -t fixes <<<"$fixes_out"
stale=0
[ -s "$initrd" ] || stale=1
for f in "$here/make-initramfs.sh" "${fixes[@]}"; do [ "$f" -nt "$initrd" ] && stale=1; done
# a flavour whose fixes changed (or went) gets a new one
[ "$fixes_out" = "$(cat "$initrd.fixes" 2>/dev/null)" ] || stale=1
if [ "$stale" = 1 ]; then
  "$here/make-initramfs.sh" "$initrd" "" "$kdir/image" "${fixes[@]}" >/dev/null
  printf '%s' "$fixes_out" > "$initrd.fixes"
fi
echo "$initrd"
