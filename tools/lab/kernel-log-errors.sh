#!/bin/bash
# Prints the error lines of a guest console log and succeeds if there are
# any: oops/int3/GPF headers ("...: 0000 [#1]"), BUG, WARN splats, panics,
# lockups, RCU stalls, hung tasks.  The patterns follow the kernel's own
# formats, so test output that merely names a symbol (do_int3) does not match.
# Usage: tools/lab/kernel-log-errors.sh CONSOLE_LOG   (- or nothing: stdin)
grep -E '(Oops|int3|general protection fault[^:]*): [0-9a-f]+ \[#|BUG: |kernel BUG|WARNING: CPU|Kernel panic|soft lockup|hard LOCKUP|rcu.*stall|blocked for more than' "${1:--}"
