#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/rt.sh, on
# the PREEMPT_RT flavour with two vCPUs.
# 1. Sleeping spinlocks across a kjit entry: kjit_rtlock_section (a
#    spinlock_t section, an rtmutex on RT) attached under block counting.
#    Four writers of 400 calls each on two CPUs: every call completes in
#    the cache and every increment is there (mutual exclusion kept); their
#    sleeps are the scheduler's choice, so only reported.  Then a SCHED_FIFO
#    caller that preempts the holder on its CPU 200 times (rt_contend
#    preempt): it finds the lock held by a task that is not running, blocks
#    in rt_spin_lock's slow path and sleeps through the scheduler from
#    translated code, and kjit must follow at least half of those sleeps.
# 2. Threaded interrupts: every handler of an RT kernel runs in an irq/N-*
#    kernel thread.  The share's NVMe completion handler (nvme_irq) attached
#    under block counting while a direct-I/O read runs: its calls enter the
#    cache from the irq thread (at least half the read's completions) and
#    complete there, and the data read is the file's.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "== $*"; }

insmod ./kjit.ko || { fail insmod; guest_done RT-GUEST-DONE; exit 1; }
insmod ./kjit_rtlock.ko hold_us=100 || fail insmod_rtlock   # 160 ms of holding: ticks preempt holders
note_modules
chk preempt_rt sh -c "uname -v | grep -q PREEMPT_RT"

step "sleeping spinlocks: four writers on two CPUs, 400 calls each"
$K config --tool bbcount > /dev/null || fail config_bbcount
chk attach_section "$K" attach kjit_rtlock_section
E=/proc/kjit_rtlock_enter
C=/sys/module/kjit_rtlock/parameters/count
s() { awk -v k="$1" '$1==k{print $2}' "$2"; }
# One phase: rt_contend's calls, then every increment and every call in the
# cache.  Sets $calls and leaves the statistics in stats-$1.txt.
contend() {
  name=$1; shift
  out="contend-$name.txt"; st="stats-$name.txt"
  $K reset > /dev/null 2>&1
  c0=$(cat $C)
  ./rt_contend "$@" > "$out" 2>&1 || fail "${name}_run" "$(cat "$out")"
  c1=$(cat $C)
  $K stats > "$st"
  calls=$(awk '$1=="calls"{print $2}' "$out")
  if [ -n "$calls" ] && [ $((c1 - c0)) -eq "$calls" ]; then pass "${name}_every_increment" "$calls calls, $((c1 - c0)) increments"
  else fail "${name}_every_increment" "$((c1 - c0)) increments of ${calls:-?} calls"; fi
  if [ -n "$calls" ] && [ "$(s calls_entered "$st")" -eq "$calls" ] && [ "$(s completed "$st")" -eq "$calls" ]; then
    pass "${name}_all_completed" "entered $(s calls_entered "$st"), completed $(s completed "$st")"
  else
    fail "${name}_all_completed" "entered $(s calls_entered "$st"), completed $(s completed "$st"), declined $(s calls_declined "$st"), skipped $(s calls_skipped "$st"), left_sleep_full $(s left_sleep_full "$st"), left_sleep_off $(s left_sleep_off "$st")"
  fi
}
contend rtlock writers $E 4 400
# Whether a waiter here sleeps or spins is the scheduler's choice (an
# rtlock waiter spins while the owner runs): said, not required.
echo "rtlock: sleeps followed $(s sleeps_followed stats-rtlock.txt), resumed $(s sleeps_resumed stats-rtlock.txt) (not required: waiters may spin)"

step "sleeping spinlocks: a FIFO caller preempting the holder, 200 times"
contend preempt preempt $E 200
f=$(s sleeps_followed stats-preempt.txt); r=$(s sleeps_resumed stats-preempt.txt)
if [ "${f:-0}" -ge 100 ] && [ "${r:-0}" -ge "$f" ]; then
  pass rtlock_sleeps_followed "sleeps followed $f, resumed $r (200 preemptions, need 100)"
else
  fail rtlock_sleeps_followed "sleeps followed ${f:-?}, resumed ${r:-?} of 200 preemptions (need 100): the FIFO caller did not block on the rtmutex in translated code"
fi
$K blocks > show-rtlock.txt 2>&1
# The slow path only: rt_spin_lock's fast path (a cmpxchg of the owner)
# runs in every call; rtlock_slowlock_locked only when the lock was held.
slow=$(awk '$3 ~ /^rtlock_slowlock_locked(\+|$)/ && $2 > 0 {n++} END {print n + 0}' show-rtlock.txt)
if [ "$slow" -gt 0 ]; then pass rtlock_slow_path_translated "$slow blocks of rtlock_slowlock_locked ran"
else fail rtlock_slow_path_translated "no block of rtlock_slowlock_locked ran: $(awk '$3 ~ /^rt_spin_lock|^rtlock_|^rt_mutex/ {print $3}' show-rtlock.txt | sed 's/+.*//' | sort -u | tr '\n' ' ')"; fi
$K detach kjit_rtlock_section > /dev/null 2>&1 || $K detach > /dev/null 2>&1

step "threaded interrupts: nvme_irq from its irq thread"
chk nvme_irq_threaded sh -c "for f in /proc/[0-9]*/comm; do cat \$f 2>/dev/null; done | grep -q '^irq/.*nvme'"
$K config --tool bbcount > /dev/null || fail config_bbcount_irq
chk attach_nvme_irq "$K" attach nvme_irq
# Other I/O's completions run in the same irq thread, on the other CPU: a
# call may be in flight when the counters are reset (it completes without
# having entered since the reset) or read (entered, not yet completed).  So
# judge the difference between two quiet readings: one after the reset, one
# after the direct read, each taken once the counters stop moving and their
# gap is the one the reset left (5 s at most).
irq_counts() {
  i=0; prev=
  while :; do
    $K stats > stats-irq.txt
    e=$(awk '$1=="calls_entered"{print $2}' stats-irq.txt); c=$(awk '$1=="completed"{print $2}' stats-irq.txt)
    if { [ "$prev" = "$e $c" ] && { [ "$1" = any ] || [ $(( ${c:-0} - ${e:-0} )) = "$1" ]; }; } || [ $i -ge 50 ]; then break; fi
    prev="$e $c"; sleep 0.1; i=$((i + 1))
  done
}
# The NVMe interrupts, all queues and CPUs, from /proc/interrupts: said
# beside the calls, for what else the device did.
nvme_irqs() { awk '/nvme/ {for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i} END {print n + 0}' /proc/interrupts; }
$K reset > /dev/null 2>&1
irq_counts any; e0=${e:-0}; c0=${c:-0}
i0=$(nvme_irqs)
dd if=data/blob of=/tmp/blob.read bs=4096 iflag=direct 2> dd.err || fail dd_direct "$(cat dd.err)"
i1=$(nvme_irqs)
chk direct_read_intact cmp -s data/blob /tmp/blob.read
irq_counts $((c0 - e0))
de=$(( ${e:-0} - e0 )); dc=$(( ${c:-0} - c0 ))
# One synchronous 4 KiB read at a time: each completes on its own, one
# interrupt and one run of the irq thread each.  At least half of those
# completions must have entered nvme_irq through kjit.
reads=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' dd.err)
if [ "${reads:-0}" -gt 0 ] && [ "$de" = "$dc" ] && [ $((de * 2)) -ge "$reads" ]; then
  pass irq_thread_calls "nvme_irq entered $de, completed $dc during the read of $reads blocks (need $((reads / 2))); nvme interrupts +$((i1 - i0)) (after reset: $e0, $c0)"
else
  fail irq_thread_calls "nvme_irq entered $de, completed $dc during the read of ${reads:-?} blocks (need half); nvme interrupts +$((i1 - i0)) (after reset: $e0, $c0; now ${e:-?}, ${c:-?})"
fi
$K blocks > show-irq.txt 2>&1
chk irq_handler_translated grep -q 'nvme_irq' show-irq.txt
$K detach > /dev/null 2>&1

step rmmod
chk rmmod_rtlock rmmod kjit_rtlock
chk rmmod rmmod kjit
guest_done RT-GUEST-DONE
