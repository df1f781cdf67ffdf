# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "load_unload": load/unload 20 times under load.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
step "insmod/rmmod x20 under load"
! hazard_loaded || rmmod kjit_hazard
rmmod kjit || fail rmmod_before_loop
( i=0; while [ ! -f stop-load ]; do timeout 300 $W 1 > uload-$i.txt 2>&1 || echo "uload workload $i: status $?" >> load-status.txt; i=$((i + 1)); [ $i -ge 8 ] && i=0; done ) & lp=$!
# tasks that sleep and wake in instrumented calls all along (followed
# sleeps across unloads and epoch reuse)
( while [ ! -f stop-load ]; do for m in read nanosleep futex poll; do ./blocking "$m" 2 >> sleepers.txt 2>&1; done; done ) & bp=$!
lu_fail=0
i=0
while [ $i -lt 20 ]; do
  insmod ./kjit.ko || lu_fail=$((lu_fail + 1))
  $K attach openat read write close getppid pipe2 newfstat mmap clone wait4 nanosleep clock_nanosleep futex poll > /dev/null || lu_fail=$((lu_fail + 1))
  sleep 0.3
  rmmod kjit || lu_fail=$((lu_fail + 1))
  i=$((i + 1))
done
touch stop-load; wait "$lp"; wait "$bp"; rm -f stop-load
bad=0; for f in uload-*.txt; do cmp -s native.txt "$f" || bad=$((bad + 1)); done
nsl=$(grep -c ' ok$' sleepers.txt); bsl=$(grep -c -v ' ok$' sleepers.txt)
if [ $((lu_fail + bad + bsl)) -eq 0 ] && [ "$nsl" -gt 0 ]; then
  pass load_unload_20 "sleeping callers: $nsl runs ok"
else
  fail load_unload_20 "failures $lu_fail, workload diffs $bad, sleeping callers: $nsl ok, $bsl not"
fi
insmod ./kjit.ko
insmod ./kjit_hazard.ko
