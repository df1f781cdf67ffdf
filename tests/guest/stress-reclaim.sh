#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cache reclaims under concurrent load: Debian's stress-ng (file locks,
# clocks, timers, fork, futex) with every system call attached, block
# counting and a small code cache, so the cache is flushed and refilled
# many times while both vCPUs run translated code.
# Usage: tests/guest/stress-reclaim.sh BUILD_DIR
#   Boots multi-threaded TCG (each vCPU on its own host thread: a code patch
#   and another CPU's fetch of it really overlap, which round-robin TCG never
#   shows) once per preemption mode, kernel text patched only while CPU 1 is
#   offline (stress-guest.sh says why), and fails on a stressor failure
#   (--verify and stress-ng's metrics check catch silent corruption), an
#   error in the kernel log (console and dmesg), too few reclaims, fewer
#   than 90% of the calls entering the cache (stress-guest.sh's
#   calls_covered), an expedited RCU grace period per reclaim (expedited_gp),
#   or a guest that did not finish.
# Env: KJIT_STRESS_MODES (tools/lab/preempt-modes.sh: "voluntary full", "rt"), KJIT_STRESS_SECS (8),
#   KJIT_STRESS_CACHE_KB (256), KJIT_STRESS_TOOL (bbcount), KJIT_STRESS_ORDERS (the stressor
#   orders below, separated by '|').
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
MODES="${KJIT_STRESS_MODES:-$("$root/tools/lab/preempt-modes.sh")}"
host_kjit stress-reclaim
# Stressor orders: the one that first oopsed, and two others.
ORDERS="${KJIT_STRESS_ORDERS:-flock lockf clock fork timer futex|clock flock lockf|fork futex timer clock}"

verdict_begin stress-reclaim
for mode in $MODES; do
  share="$B/guest-stress-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_stress_ng "$share" || exit 2
  share_script "$share" "$root/tests/guest/stress-guest.sh" \
    TOOL="${KJIT_STRESS_TOOL:-bbcount}" CACHE_KB="${KJIT_STRESS_CACHE_KB:-256}" \
    ORDERS="$ORDERS" SECS="${KJIT_STRESS_SECS:-8}"
  echo "stress-reclaim: booting ($mode preemption, multi-threaded TCG)"
  rc=0
  append="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
     --timeout 900 ${append:+--append "$append"} || rc=$?
  verdict_boot "$share" "$rc" STRESS-GUEST-DONE "$mode"
  echo "stress-reclaim: $mode: $(grep ' reclaims ' "$share/checks.txt" 2>/dev/null | cut -d' ' -f4-)"
  echo "stress-reclaim: $mode: $(grep -m1 '^calls covered ' "$share/stats.txt" 2>/dev/null)"
done
verdict_end; exit $?
