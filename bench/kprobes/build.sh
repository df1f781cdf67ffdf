#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build bench/kprobes/kprobench.ko against the pinned kernel headers.
# Usage: bench/kprobes/build.sh OUTDIR   (-> OUTDIR/kprobench.ko)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/../../tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
out="$1"; mkdir -p "$out"; out="$(cd "$out" && pwd)"
cp "$here/kprobench.c" "$here/Kbuild" "$out/"
make -s -C "$KDIR" M="$out" -j"${JOBS:-2}" modules
ls "$out/kprobench.ko"
