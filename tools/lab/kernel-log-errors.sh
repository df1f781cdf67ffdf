#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prints the error lines of a kernel log (a guest's console.log or dmesg)
# and succeeds if there are any: die() headers ("Oops: 0002 [#1]",
# "general protection fault ...: 0000 [#1]", "invalid opcode: 0000 [#1]"),
# BUG, WARN splats, panics, lockups, RCU stalls, hung tasks, stack dumps,
# the unwinders' warnings.
# The patterns follow the kernel's own formats, so test output that merely
# names a symbol (do_int3, "stall") does not match.  A log that cannot be
# read counts as an error: a missing log must not pass as a clean one.
# POSIX sh and grep -E only: the guest (busybox) runs it too.
# Usage: tools/lab/kernel-log-errors.sh [LOG...]   (none or -: stdin)
# The unwinders' own warnings (unwind_orc.c, unwind_frame.c): what a
# translated frame the unwinder cannot walk prints, without a CPU line.
unwinder="WARNING: (stack going in the wrong direction|can't access registers|kernel stack (frame pointer|regs) at)"
[ $# -gt 0 ] || set -- -
status=1
for log in "$@"; do
  if [ "$log" != - ] && [ ! -r "$log" ]; then
    echo "kernel-log-errors: cannot read $log"
    status=0
    continue
  fi
  grep -E ': [0-9a-f]{4} \[#[0-9]+\]|BUG: |kernel BUG|WARNING: CPU|Kernel panic|soft lockup|hard LOCKUP|rcu.*stall|blocked for more than|Call Trace:|'"$unwinder" "$log" && status=0
done
exit "$status"
