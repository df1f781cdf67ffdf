#!/bin/bash
# Cache reclaims under concurrent load: Debian's stress-ng (file locks,
# clocks, timers, fork, futex) with every system call attached, block
# counting and a small code cache, so the cache is flushed and refilled
# many times while both vCPUs run translated code.
# Usage: tests/guest/stress-reclaim.sh BUILD_DIR
#   Boots multi-threaded TCG (each vCPU on its own host thread: a code patch
#   and another CPU's fetch of it really overlap, which round-robin TCG never
#   shows) once per preemption mode, and fails on a stressor failure
#   (--verify and stress-ng's metrics check catch silent corruption), an
#   error in the kernel log (console and dmesg), too few reclaims, or a guest that did not finish.
# Env: KJIT_STRESS_MODES ("voluntary full"), KJIT_STRESS_SECS (8),
#   KJIT_STRESS_CACHE_KB (256), KJIT_STRESS_TOOL (bbcount).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
MODES="${KJIT_STRESS_MODES:-voluntary full}"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "stress-reclaim: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
share_guest_bin "$B"
# Stressor orders: the one that first oopsed, and two others.
ORDERS="flock lockf clock fork timer futex|clock flock lockf|fork futex timer clock"

fail=0
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
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
     --timeout 900 --append "preempt=$mode" || rc=$?
  [ "$rc" = 0 ] || { echo "stress-reclaim: FAIL: guest status $rc ($mode)" >&2; tail -n 40 "$share/console.log" >&2 || true; fail=1; }
  grep -q STRESS-GUEST-DONE "$share/guest.log" 2>/dev/null || { echo "stress-reclaim: FAIL: guest did not finish ($mode)" >&2; fail=1; }
  if [ -f "$share/checks.txt" ]; then
    np=$(grep -c ' PASS' "$share/checks.txt" || true); nf=$(grep -c ' FAIL' "$share/checks.txt" || true)
    echo "stress-reclaim: $mode: $np checks passed, $nf failed; $(grep ' reclaims ' "$share/checks.txt" | cut -d' ' -f4-)"
    if grep ' FAIL' "$share/checks.txt" >&2; then fail=1; fi
  else
    echo "stress-reclaim: FAIL: no checks.txt ($mode)" >&2; fail=1
  fi
  if "$root/tools/lab/kernel-log-errors.sh" "$share/console.log" "$share/dmesg.txt" >&2; then
    echo "stress-reclaim: FAIL: kernel log has errors ($mode)" >&2; fail=1
  fi
done
if [ "$fail" = 0 ]; then echo "stress-reclaim: PASS"; else echo "stress-reclaim: FAIL"; fi
exit "$fail"
