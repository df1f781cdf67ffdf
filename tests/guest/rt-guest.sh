#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/rt.sh, on
# the PREEMPT_RT flavour with two vCPUs.
# 1. Sleeping spinlocks across a kjit entry: kjit_rtlock_section (a
#    spinlock_t section, an rtmutex on RT) attached under block counting,
#    four writers of 400 calls each on two CPUs.  The holder spins inside
#    the section while the others block in rt_spin_lock's slow path and
#    sleep through the scheduler from translated code: kjit must follow
#    those sleeps, every call must complete in the cache, and every
#    increment must be there (mutual exclusion kept).
# 2. Threaded interrupts: every handler of an RT kernel runs in an irq/N-*
#    kernel thread.  The share's NVMe completion handler (nvme_irq) attached
#    under block counting while a direct-I/O read runs: its calls enter the
#    cache from the irq thread and complete there, and the data read is the
#    file's.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "== $*"; }

insmod ./kjit.ko || { fail insmod; guest_done RT-GUEST-DONE; exit 1; }
insmod ./kjit_rtlock.ko hold_us=100 || fail insmod_rtlock   # 160 ms of holding: ticks preempt holders
note_modules
chk preempt_rt sh -c "uname -v | grep -q PREEMPT_RT"

step "sleeping spinlocks: four writers, 400 calls each"
$K config --tool bbcount > /dev/null || fail config_bbcount
chk attach_section "$K" attach kjit_rtlock_section
$K reset > /dev/null 2>&1
c0=$(cat /sys/module/kjit_rtlock/parameters/count)
for _ in 1 2 3 4; do
  (for _ in 1 2 3 4 5 6 7 8; do echo 50 > /sys/module/kjit_rtlock/parameters/enter; done) &
done
wait
c1=$(cat /sys/module/kjit_rtlock/parameters/count)
$K stats > stats-rtlock.txt
if [ $((c1 - c0)) -eq 1600 ]; then pass rtlock_every_increment "1600 calls, 1600 increments"; else fail rtlock_every_increment "$((c1 - c0)) increments of 1600 calls"; fi
s() { awk -v k="$1" '$1==k{print $2}' stats-rtlock.txt; }
if [ "$(s calls_entered)" -eq 1600 ] && [ "$(s completed)" -eq 1600 ]; then
  pass rtlock_all_completed "entered $(s calls_entered), completed $(s completed)"
else
  fail rtlock_all_completed "entered $(s calls_entered), completed $(s completed), declined $(s calls_declined), skipped $(s calls_skipped), left_sleep_full $(s left_sleep_full), left_sleep_off $(s left_sleep_off)"
fi
if [ "$(s sleeps_followed)" -gt 0 ] && [ "$(s sleeps_resumed)" -gt 0 ]; then
  pass rtlock_sleeps_followed "sleeps followed $(s sleeps_followed), resumed $(s sleeps_resumed)"
else
  fail rtlock_sleeps_followed "sleeps followed $(s sleeps_followed), resumed $(s sleeps_resumed): no writer blocked on the rtmutex in translated code"
fi
$K blocks > show-rtlock.txt 2>&1
chk rtlock_slow_path_translated grep -qE 'rt_spin_lock|rtlock_slowlock' show-rtlock.txt
$K detach kjit_rtlock_section > /dev/null 2>&1 || $K detach > /dev/null 2>&1

step "threaded interrupts: nvme_irq from its irq thread"
chk nvme_irq_threaded sh -c "for f in /proc/[0-9]*/comm; do cat \$f 2>/dev/null; done | grep -q '^irq/.*nvme'"
$K config --tool bbcount > /dev/null || fail config_bbcount_irq
chk attach_nvme_irq "$K" attach nvme_irq
$K reset > /dev/null 2>&1
dd if=data/blob of=/tmp/blob.read bs=4096 iflag=direct 2> dd.err || fail dd_direct "$(cat dd.err)"
chk direct_read_intact cmp -s data/blob /tmp/blob.read
# Other I/O's completions run in the same irq thread, on the other CPU: one
# may be in flight when the counters are read.  A call that left the cache
# stays uncompleted, so wait (5 s at most) for the two to agree.
i=0
while :; do
  $K stats > stats-irq.txt
  e=$(awk '$1=="calls_entered"{print $2}' stats-irq.txt); c=$(awk '$1=="completed"{print $2}' stats-irq.txt)
  if [ "${e:-0}" = "${c:-0}" ] || [ $i -ge 50 ]; then break; fi
  sleep 0.1; i=$((i + 1))
done
if [ "${e:-0}" -gt 0 ] && [ "$e" = "$c" ]; then pass irq_thread_calls "nvme_irq entered $e, completed $c"; else fail irq_thread_calls "nvme_irq entered ${e:-?}, completed ${c:-?}"; fi
$K blocks > show-irq.txt 2>&1
chk irq_handler_translated grep -q 'nvme_irq' show-irq.txt
$K detach > /dev/null 2>&1

step rmmod
chk rmmod_rtlock rmmod kjit_rtlock
chk rmmod rmmod kjit
guest_done RT-GUEST-DONE
