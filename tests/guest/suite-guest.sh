#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/run-suite.sh.
# Every check prints "CHECK name PASS|FAIL detail" to checks.txt; the host
# fails on any FAIL.  The native run and insmod come first, then the phases
# (tests/guest/suite/NAME.sh, in SUITE_PHASES' order), then the kernel log
# check and the deliberate WARN.  Preamble parameters: PHASES (the phases to
# run, default all), QUICK=1 (skips start_stop and load_unload, the slow
# stress phases), ITERS (workload iterations).
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
Q=${QUICK:-0}
W=./workload
ITERS=${ITERS:-1}
: > checks.txt
# Steps also go to the console (/dev/kmsg at KERN_CRIT, shown despite
# `quiet`): if the guest hangs, the host's console.log says where.
step() {
  echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"
  echo "<2>kjit-suite: step $*" > /dev/kmsg 2>/dev/null
}

ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null

step native
$W "$ITERS" > native.txt 2>&1; chk native_workload grep -q '^timers_sleep_timerfd_itimer *ok' native.txt
$W efault > native-efault.txt 2>&1
n_ef=$(grep -c ' -14$' native-efault.txt)
chk native_efault_count [ "$n_ef" -ge 15 ]

step insmod
insmod ./kjit.ko || { fail insmod; dmesg > dmesg.txt; sync; exit 1; }
note_modules
# A kernel without upstream 61399e0c5410 (os/linux/kernel_quirks.c; 6.1's):
# kjit must say so at load, and must not where the kernel has the fix
# (RCU_REINIT=no: run-suite.sh read the kernel's own rcu_read_unlock_special)
# or the lab fixed the running kernel as that commit does
# (tools/lab/kernel-fixes.sh: 6.1's rt).
named_rcu_bug() { dmesg | grep -q "kjit: kernel bug: rcu_read_unlock_special() re-initialises"; }
not_named_rcu_bug() { ! named_rcu_bug; }
if [ -d /sys/module/kjit_lab_rcu_defer_qs ] || [ "${RCU_REINIT:-}" = no ]; then
  chk kernel_bug_named_at_load not_named_rcu_bug
else
  chk kernel_bug_named_at_load named_rcu_bug
fi
config_base
sync

# Every phase in the order they run; each leaves kjit.ko loaded with
# nothing attached.
SUITE_PHASES="cost livepatch direct_peer tools openat sleeps capture_config hot_functions
 hazards uffd_unload attach_waits ipmodify dropped bbcount_flushes plugins tiny_cache
 start_stop load_unload"
want_phase() {
  case " $(echo "${PHASES:-all}" | tr ',' ' ') " in
    *" all "*|*" $1 "*) ;;
    *) return 1 ;;
  esac
  case "$Q:$1" in 1:start_stop|1:load_unload) return 1 ;; esac
}
hazard_loaded() { grep -q '^kjit_hazard ' /proc/modules; }
# shellcheck disable=SC2034  # read by the livepatch and direct_peer phases
orig_cmdline=$(cat /proc/cmdline)
for phase in $SUITE_PHASES; do
  want_phase "$phase" || continue
  # which phase the checks that follow belong to (run-suite.sh compares a
  # run of some phases with those phases' part of suite/checks.list)
  echo "PHASE $phase" >> checks.txt
  # shellcheck source=/dev/null
  . "./suite/$phase.sh"
  sync
done
echo "PHASE base" >> checks.txt


# --- kernel log before the deliberate WARN ------------------------------------
step "log check"
# the host judges this log and taint (tests/guest/verdict.sh): the WARN
# below taints with W and prints a splat on purpose
log_snapshot
if ./kernel-log-errors.sh dmesg.txt > bad-log.txt; then
  fail kernel_log_clean "$(head -3 bad-log.txt | tr '\n' ' ')"
else
  pass kernel_log_clean
fi
$K stats > stats-final.txt

# --- WARN inside instrumented code (last: it taints with W) -------------------
step "WARN at the original address"
hazard_loaded || insmod ./kjit_hazard.ko
$K attach kjit_hazard_entry > /dev/null
echo warn > /sys/module/kjit_hazard/parameters/cmd
$K detach all > /dev/null
dmesg | grep -A3 'WARNING:' > warn.txt
if grep -q 'kjit_hazard_entry+0x' warn.txt && ! grep -q 'kjit-code-cache' warn.txt; then
  pass warn_reports_original_address "$(grep -m1 -E 'RIP|WARNING' warn.txt)"
else
  fail warn_reports_original_address "$(head -2 warn.txt | tr '\n' ' ')"
fi
# after the step marker the log may hold that WARN's splat and nothing else
dmesg | sed -n '/kjit-suite: step WARN at the original address/,$p' | ./kernel-log-errors.sh \
  | grep -v -e 'WARNING: CPU' -e 'Call Trace:' > warn-errors.txt
if [ -s warn-errors.txt ]; then fail warn_not_bug "$(head -3 warn-errors.txt | tr '\n' ' ')"; else pass warn_not_bug; fi
rmmod kjit_hazard
rmmod kjit || fail final_rmmod
guest_done SUITE-GUEST-DONE
