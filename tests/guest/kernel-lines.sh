#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest suite on the other kernel lines kjit supports (tools/kernel-lines:
# Debian 12's 6.12, which differs from the default 6.1 in what kjit must
# probe: IBT's ENDBR before the fentry site, the direct-call API, the module
# layout, preempt_count's home).  For each: its image and kjit.ko in
# BUILD_DIR/flavours/ABI (built from this build's one engine object, as
# tests/guest/flavours.sh does); the whole-.text sweep of its vmlinux; the
# smoke run with every system call attached under block counting; then
# tests/guest/run-suite.sh there, one boot, every phase but the two long
# stress loops (KJIT_SUITE_QUICK; KJIT_LINES_PHASES to choose), each held to
# its part of tests/guest/suite/checks.list.
# The whole suite on a line: KJIT_KERNEL=ABI ./kjit-lab test.
# Usage: tests/guest/kernel-lines.sh BUILD_DIR
# Env: KJIT_LINES (default tools/kernel-lines), KJIT_LINES_PHASES,
#   KJIT_LINES_MODES (default: the kernel's first preemption mode).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
lines="${KJIT_LINES:-$(cat "$root/tools/kernel-lines")}"
phases="${KJIT_LINES_PHASES:-all}"
# shellcheck source=tests/guest/flavour-lab.sh
. "$root/tests/guest/flavour-lab.sh"
# shellcheck source=tests/guest/suite-boot.sh
. "$root/tests/guest/suite-boot.sh"

# On a kernel built with IBT, the run exercised what IBT changes only if
# kjit.ko found system calls' fentry sites after an ENDBR (its load line):
# otherwise the line's layout is not what this test is for.
ibt_layout_seen() {
  local line
  grep -qx 'CONFIG_X86_KERNEL_IBT=y' "$1/lab/kernel/config" || return 0
  line="$(grep -m1 'kjit: kernel: ' "$1/guest-smoke/console.log" | sed 's/.*kjit: kernel: //')"
  case "$line" in
    "IBT built in"*"fentry at +4 after ENDBR"*) echo "kernel-lines: $k: $line" ;;
    *) echo "kernel-lines: FAIL: $k: IBT kernel, but kjit's load line says: ${line:-nothing}" >&2; return 1 ;;
  esac
}

fail=0
for k in $lines; do
  echo "kernel-lines: $k"
  lab_rc=0; flavour_lab kernel-lines "$B" "$k" || lab_rc=$?
  [ "$lab_rc" != 2 ] || exit 2
  [ "$lab_rc" = 0 ] || { fail=1; continue; }
  d="$flavour_dir"
  flavour_sweep kernel-lines "$k" || fail=1
  flavour_module kernel-lines "$k" || { fail=1; continue; }
  flavour_smoke kernel-lines "$k" && ibt_layout_seen "$d" || fail=1
  modes="${KJIT_LINES_MODES:-$("$root/tools/lab/preempt-modes.sh" --first)}"
  if suite_boot kernel-lines "$k" "$d/suite.log" env KJIT_HOST_BUILD="$B" KJIT_SUITE_MODES="$modes" \
       KJIT_SUITE_PHASES="$phases" KJIT_SUITE_QUICK=1 "$root/tests/guest/run-suite.sh" "$d"; then
    echo "kernel-lines: $k: PASS"
  else
    fail=1
  fi
done
exit "$fail"
