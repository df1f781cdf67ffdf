#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the lab's workarounds for bugs of the pinned kernel itself that its
# own code paths reach without kjit, and prints the path of each module the
# flavour needs (none: prints nothing).  run-guest.sh puts them in the
# initramfs, whose /init loads them before the test script runs and says so
# on the console.  kjit's packages carry none of them.
#   rcu_defer_qs (kernel-fixes/rcu_defer_qs.c): Debian 6.1's deferred-QS
#     irq_work re-initialisation hang, fixed as upstream 61399e0c5410 does
#     (the work initialised once, the function's stores into it replaced
#     with jumps over them at load); needed where RCU boosting reaches it
#     (CONFIG_RCU_BOOST=y: the rt flavour).  Elsewhere only an expedited
#     grace period reaches it, and kjit starts none (os/linux/quiesce.c).
# Usage: tools/lab/kernel-fixes.sh OUTDIR KERNEL_DIR   (fetch-kernel.sh's OUTDIR)
# Env: KDIR (default /usr/src/linux-headers-$ABI).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
OUT="$1"
KERNEL_DIR="$2"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
FACTS="$repo/tests/data/kernel-facts-$ABI.txt"

fact() { awk -v k="$1" '$1 == k { print $2 }' "$FACTS"; }

grep -qx 'CONFIG_RCU_BOOST=y' "$KERNEL_DIR/config" || exit 0
# A kernel with upstream's fix (the work initialised once) needs none.
reinit="$("$here/rcu-reinit.sh")" || exit 1
[ "$reinit" = yes ] || exit 0
[ -n "$(fact layout.rcu_read_unlock_special.reinit)" ] || {
  echo "kernel-fixes: $FACTS has no rcu_read_unlock_special layout (KJIT_KERNEL=$ABI tools/lab/extract-kallsyms.sh with the debug vmlinux fetched)" >&2
  exit 1; }
[ -d "$KDIR" ] || { echo "kernel-fixes: kernel headers $KDIR missing (apt-get install linux-headers-$ABI)" >&2; exit 1; }
src="$here/kernel-fixes"
ko="$OUT/kjit_lab_rcu_defer_qs.ko"
if [ ! -s "$ko" ] || [ "$src/rcu_defer_qs.c" -nt "$ko" ] || [ "$FACTS" -nt "$ko" ] || [ "$src/Kbuild" -nt "$ko" ]; then
  # Built apart and renamed into place: two guest tests may start at once.
  mkdir -p "$OUT"
  dir="$(mktemp -d "$OUT/build.XXXXXX")"
  cp "$src/rcu_defer_qs.c" "$src/Kbuild" "$dir/"
  { echo "/* from $(basename "$FACTS") (tools/lab/kernel-fixes.sh) */"
    echo "#define RCU_DATA $(fact layout.rcu_data)UL"
    echo "#define RCU_DATA_CPU $(fact layout.rcu_data.cpu)"
    echo "#define RCU_DATA_DEFER_QS_IW $(fact layout.rcu_data.defer_qs_iw)"
    echo "#define REINIT_OFFSETS $(grep '^layout.rcu_read_unlock_special.reinit ' "$FACTS" | cut -d' ' -f2- | sed 's/ /, /g')"
  } > "$dir/layout.h"
  make -C "$KDIR" M="$dir" modules > "$dir/build.log" 2>&1 || {
    cat "$dir/build.log" >&2; echo "kernel-fixes: building rcu_defer_qs failed ($dir)" >&2; exit 1; }
  mv -f "$dir/kjit_lab_rcu_defer_qs.ko" "$ko"
  rm -rf "$dir"
fi
echo "$ko"
