# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "start_stop": start/stop 100 times under load.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
step "start/stop x100 under load"
# 100 cycles of attach (5 system calls) / detach, then 3 of all-syscalls
( i=0; while [ ! -f stop-load ]; do timeout 300 $W 1 > load-$i.txt 2>&1 || echo "load workload $i: status $?" >> load-status.txt; i=$((i + 1)); [ $i -ge 8 ] && i=0; done ) & lp=$!
ss_fail=0
i=0
while [ $i -lt 100 ]; do
  $K attach openat read write close getppid > /dev/null || ss_fail=$((ss_fail + 1))
  $K detach all > /dev/null || ss_fail=$((ss_fail + 1))
  i=$((i + 1))
done
i=0
while [ $i -lt 3 ]; do
  $K attach all-syscalls > /dev/null 2>&1 || ss_fail=$((ss_fail + 1))
  $K detach all > /dev/null || ss_fail=$((ss_fail + 1))
  i=$((i + 1))
done
echo "start/stop failures: $ss_fail"
touch stop-load; wait "$lp"; rm -f stop-load
bad=0; for f in load-*.txt; do cmp -s native.txt "$f" || bad=$((bad + 1)); done
chk start_stop_100 [ $((ss_fail + bad)) -eq 0 ]
