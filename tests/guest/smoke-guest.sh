#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/smoke.sh.
# Preamble parameters: ITERS (workload iterations), FUNCS (functions to
# attach, one at a time), ALL=1 (then every system call at once, counting
# blocks).  A failed step prints "SMOKE-FAIL: step" and
# exits 1; workload outputs are compared with the native run on the host.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
step() { echo "== $*"; }
die() { echo "SMOKE-FAIL: $*"; dmesg > dmesg.txt; cat /proc/sys/kernel/tainted > tainted.txt; sync; exit 1; }
work() { ./syscalls "$ITERS" /mnt/kjit/kjit.ko > "$1.a" 2>&1 & ./syscalls "$ITERS" /proc/version > "$1.b" 2>&1; wait; }
step insmod; insmod ./kjit.ko || die insmod
dmesg | grep 'kjit:' ; sync
step native; work native || true
i=0
for f in $FUNCS; do
  i=$((i + 1))
  step attach "$f"; $K attach "$f" || die "attach $f"
  sync
  step "run $f"; work "kjit$i"
  $K stats > "stats$i.txt" || die stats; cat "stats$i.txt"; sync
done
step detach; $K detach all || die detach
if [ "${ALL:-0}" = 1 ]; then
  step "bbcount, all system calls"
  $K config --tool bbcount || die "config bbcount"
  $K attach all-syscalls > attach-all.txt 2>&1 || die "attach all-syscalls: $(tail -n1 attach-all.txt)"
  tail -n1 attach-all.txt
  work all
  $K stats > stats-all.txt || die stats; grep -E '^(entries|blocks_built|completion) ' stats-all.txt
  $K show > report-all.txt 2>&1 || die "show bbcount"
  $K detach all || die detach
  $K config --tool none || die "config none"
  sync
fi
work after
step "rmmod under load"
for f in $FUNCS; do $K attach "$f" >/dev/null || die "re-attach $f"; done
e0=$(stat_of entries)
./syscalls $((ITERS * 5)) /proc/version > unload.a 2>&1 &
bg=$!
# rmmod must come while the workload runs through kjit: wait (up to 10 s)
# until it has entered, then make sure it is still running.
n=0
while [ "$(stat_of entries)" -le "$e0" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ "$(stat_of entries)" -gt "$e0" ] || die "workload never entered kjit before rmmod"
kill -0 $bg 2>/dev/null || die "workload not running at rmmod"
echo "workload running at rmmod: yes"
rmmod kjit || die rmmod
wait $bg
guest_done SMOKE-GUEST-DONE
