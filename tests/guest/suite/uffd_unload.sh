# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "uffd_unload": unload while a task sleeps in a page fault taken in the cache.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# A task sleeping in a fault handler has switched voluntarily, but the
# fault's frame holds a cache address: detach/rmmod must wait for it.
step "unload waits for a task asleep in a fault taken in the cache"
config config_icount_uffd icount
# The fault is in the cache unless the task left it before (a cond_resched
# in down_read, for instance, continues natively): /proc/PID/task/*/stack
# shows the exception frame's cache address.  Up to five tries.
try=0; in_cache=0
$K attach newuname > /dev/null
e0=$(stat_of entries)
while [ $try -lt 5 ] && [ $in_cache = 0 ]; do
  rm -f uffd-blocked uffd-release unload-rc
  ./uffd_fault . > uffd.txt 2>&1 & up=$!
  n=0; while [ ! -f uffd-blocked ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  cat /proc/$up/task/*/stack > uffd-stack.txt 2>/dev/null
  grep -q kjit-code-cache uffd-stack.txt && in_cache=1
  [ $in_cache = 1 ] || { touch uffd-release; wait "$up"; }
  try=$((try + 1))
done
e1=$(stat_of entries)
if [ -f uffd-blocked ] && [ $((e1 - e0)) -ge 1 ] && [ $in_cache = 1 ]; then
  pass uffd_blocked_in_instrumented_uname
else
  fail uffd_blocked_in_instrumented_uname "kjit_entries=$((e1 - e0)) in_cache=$in_cache"
fi
( $K detach all > /dev/null; rmmod kjit; echo $? > unload-rc ) & dp=$!
sleep 4
chk unload_waits_for_sleeping_fault [ ! -f unload-rc ]
touch uffd-release
wait "$up"; wait "$dp"
chk uffd_result_after_unload grep -q "uffd ok" uffd.txt
chk unload_after_fault_resolved [ "$(cat unload-rc 2>/dev/null)" = 0 ]
insmod ./kjit.ko || fail insmod_after_uffd
config config_icount_after_reload icount
