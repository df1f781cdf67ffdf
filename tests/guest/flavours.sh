#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The smoke run on every other Debian kernel flavour (tools/kernel-version,
# tools/kernel-flavours):
# for each, its image and initramfs (BUILD_DIR/flavours/ABI/lab), kjit.ko
# built against its headers from this build's engine object, then
# tests/guest/smoke.sh with every system call attached under block counting
# (workload results and EFAULT cases equal to native, rmmod under load, a
# clean kernel log, no taint); and the whole-.text sweep of its vmlinux
# with the thresholds of sim.sweep.  The full suite on a flavour is
# `KJIT_KERNEL=ABI ./kjit-lab test`.
# Usage: tests/guest/flavours.sh BUILD_DIR
# Env: KJIT_FLAVOURS (default: tools/kernel-version's and
#   tools/kernel-flavours', without the ABI this build is for).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
flavours="${KJIT_FLAVOURS:-$({ echo "$kjit_default_abi"; cat "$root/tools/kernel-flavours"; } | grep -vxF "$ABI" || true)}"
[ -n "$flavours" ] || { echo "flavours: no other flavour to run" >&2; exit 1; }
engine="$B/kernel-objs/kjit_engine_kernel.o"
[ -f "$engine" ] || { echo "flavours: $engine missing (cmake target kjit_engine_kernel)" >&2; exit 2; }

fail=0
for f in $flavours; do
  d="$B/flavours/$f"
  mkdir -p "$d/lab"
  echo "flavours: $f"
  export KJIT_KERNEL="$f" KJIT_BUILD="$d/lab"
  if ! "$root/tools/lab/fetch-kernel.sh" "$d/lab/kernel" > "$d/fetch.log" 2>&1; then
    echo "flavours: FAIL: $f: fetching the image" >&2; tail -n 20 "$d/fetch.log" >&2; fail=1; continue
  fi
  if "$root/tests/sim/check-sweep.sh" "$B/tools/kjit-sim/kjit-sim" "$d/lab/kernel/vmlinux" \
       "$root/tests/data/kallsyms-$f.txt.xz" > "$d/sweep.log" 2>&1; then
    grep '^sweep: ' "$d/sweep.log" | sed "s/^/flavours: $f: /"
  else
    echo "flavours: FAIL: $f: sweep" >&2; tail -n 20 "$d/sweep.log" >&2; fail=1
  fi
  if ! KJIT_ENGINE_OBJ="$engine" "$root/os/linux/build.sh" "$d" > "$d/module.log" 2>&1; then
    echo "flavours: FAIL: $f: building kjit.ko" >&2; tail -n 20 "$d/module.log" >&2; fail=1; continue
  fi
  if KJIT_SMOKE_KO="$d/module/kjit.ko" KJIT_SMOKE_SHARE="$d/guest-smoke" KJIT_SMOKE_ALL=1 \
       "$root/tests/guest/smoke.sh" "$B" > "$d/smoke.log" 2>&1; then
    grep -E '^smoke: all system calls' "$d/smoke.log" | sed "s/^smoke:/flavours: $f:/"
    echo "flavours: $f: PASS"
  else
    echo "flavours: FAIL: $f: smoke run" >&2; tail -n 30 "$d/smoke.log" >&2; fail=1
  fi
done
exit "$fail"
