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
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
flavours="${KJIT_FLAVOURS:-$({ echo "$kjit_default_abi"; cat "$root/tools/kernel-flavours"; } | grep -vxF "$ABI" || true)}"
[ -n "$flavours" ] || { echo "flavours: no other flavour to run" >&2; exit 1; }
# shellcheck source=tests/guest/flavour-lab.sh
. "$root/tests/guest/flavour-lab.sh"

fail=0
for f in $flavours; do
  echo "flavours: $f"
  lab_rc=0; flavour_lab flavours "$B" "$f" || lab_rc=$?
  [ "$lab_rc" != 2 ] || exit 2
  [ "$lab_rc" = 0 ] || { fail=1; continue; }
  flavour_sweep flavours "$f" || fail=1
  flavour_module flavours "$f" || { fail=1; continue; }
  if flavour_smoke flavours "$f"; then echo "flavours: $f: PASS"; else fail=1; fi
done
exit "$fail"
