#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/stress-reclaim.sh.
# Parameters come from the preamble the host puts before this file:
#   TOOL (built-in tool), CACHE_KB (code cache), ORDERS (stressor lists,
#   separated by '|'), SECS (seconds per stressor).
# Prints "CHECK name PASS|FAIL detail" lines to checks.txt.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-stress: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }

# Kernel text is patched (insmod, attach, the kprobe below, detach, rmmod)
# only while CPU 1 is offline.  The host boots multi-threaded TCG so that
# the reclaims' cache writes race real fetches, and QEMU 7.2's
# multi-threaded TCG can keep executing a stale int3 after text_poke_bp
# removed it (tools/lab/run-guest.sh): the vCPU loops on it with
# interrupts off, and text_poke_bp's IPI waits for it forever.  The
# suite's load and unload under load run on single-threaded TCG.
cpu1() {
  echo "$1" > /sys/devices/system/cpu/cpu1/online || { fail "cpu1_online_$1" "cannot write $1"; return 1; }
  [ "$(cat /sys/devices/system/cpu/cpu1/online)" = "$1" ] || { fail "cpu1_online_$1" "still $(cat /sys/devices/system/cpu/cpu1/online)"; return 1; }
}
cpu1 0 || exit 1
insmod ./kjit.ko || { fail insmod; exit 1; }
note_modules
config_base
config config "$TOOL" "$CACHE_KB" || exit 1
n=$($K attach all-syscalls 2>/dev/null | grep -c attached)
if [ "$n" -gt 0 ]; then pass attach "$n"; else fail attach "nothing attached"; fi

# Calls of synchronize_rcu_expedited() during the load (kprobe_profile's
# hit count): kjit's reclaims must start none (quiesce.c says why).
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
if echo 'p:kjitexp synchronize_rcu_expedited' >> $T/kprobe_events && echo 1 > $T/events/kprobes/kjitexp/enable; then
  exp_probe=1
else
  exp_probe=0; fail expedited_gp "kprobe on synchronize_rcu_expedited refused"
fi

cpu1 1 || exit 1

echo "$ORDERS" | tr '|' '\n' > orders.txt
i=0
while read -r order; do
  i=$((i + 1))
  for s in $order; do
    step "order $i: $s"
    timeout 120 ./lib/ld-linux-x86-64.so.2 --library-path ./lib ./stress-ng --"$s" 2 --timeout "${SECS}s" --verify --temp-path /tmp -q > "sng-$i-$s.txt" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then pass "stress_${i}_$s"; else fail "stress_${i}_$s" "rc $rc: $(tr '\n' ' ' < "sng-$i-$s.txt" | cut -c1-300)"; fi
  done
done < orders.txt

$K stats > stats.txt
r=$(stat_of reclaims); f=$(stat_of flushes); e=$(stat_of entries)
# Without reclaims under load the run proves nothing.
if [ "${r:-0}" -ge 10 ]; then
  pass reclaims "reclaims=$r flushes=$f entries=$e"
else
  fail reclaims "reclaims=${r:-?} flushes=${f:-?} entries=${e:-?}"
fi
# Entries declined while a full half of the cache is reclaimed run
# natively; 96.2-98.4% of the calls entered the cache in the runs measured
# (256 KiB, 90-180 reclaims, 5-11 million calls).  Below 90% the reclaims
# leave the cache unusable too long (a grace period that drags, a half not
# handed back), and the stressors' results say little about translated code.
covered_at_least calls_covered stats.txt 90
x=""
[ "$exp_probe" = 0 ] || x=$(awk '$1=="kjitexp"{print $2}' $T/kprobe_profile)
cpu1 0 || exit 1
if [ "$exp_probe" = 1 ]; then
  echo 0 > $T/events/kprobes/kjitexp/enable; echo '-:kjitexp' >> $T/kprobe_events
  # The stressors themselves start none; one per ten reclaims leaves room
  # for a kernel path nobody here chose, none for one per reclaim.
  if [ -n "$x" ] && [ "$((x * 10))" -lt "${r:-0}" ]; then
    pass expedited_gp "$x calls of synchronize_rcu_expedited in $r reclaims"
  else
    fail expedited_gp "${x:-?} calls of synchronize_rcu_expedited in ${r:-?} reclaims"
  fi
fi
$K detach all > /dev/null
if rmmod kjit; then pass rmmod; else fail rmmod; fi
cpu1 1
# WARN splats and stalls print below the console's `quiet` level: the host
# checks the guest's copy of the whole log too.
guest_done STRESS-GUEST-DONE
