#!/bin/bash
# Prints the error lines of a guest console log and succeeds if there are
# any (oopses, BUG, WARN, int3 traps, GPFs, panics, lockups, RCU stalls).
# Usage: tools/lab/kernel-log-errors.sh CONSOLE_LOG   (- or nothing: stdin)
grep -E 'Oops|BUG:|kernel BUG|WARNING:|int3: |general protection|Kernel panic|soft lockup|hard LOCKUP|rcu.*stall|blocked for more than' "${1:--}"
