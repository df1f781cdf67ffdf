#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attaching any function is safe (tests/guest/attach-all-guest.sh): kjit's
# own functions (the engine lock's, RCU's, the preemption helpers, the
# allocators, irq_work, kallsyms: what kjit calls while it runs) are
# refused with a reason or attached and harmless (the lock and RCU ones
# attached), and a random choice of attachable functions is attached in
# batches and then in one request while the suite's workload runs, with
# results equal to native, a clean kernel log and a working rmmod; in
# every phase calls enter the cache, within bounds of declined and
# skipped ones.  Each boot reports the checks of
# checks/attach_all.list.  Both preemption modes, single-threaded TCG
# (attaching patches kernel text while both vCPUs run).
# Usage: tests/guest/attach-all.sh BUILD_DIR
# Env: KJIT_ATTACH_SEED (the random choice; default: the time, printed),
#   KJIT_ATTACH_N (3000 functions chosen), KJIT_ATTACH_BATCH (1000 a request),
#   KJIT_ATTACH_MODES ("voluntary full"), KJIT_ATTACH_ITERS (1 workload
#   iteration a run), KJIT_ATTACH_TIMEOUT (seconds a boot),
#   FULL=1: every attachable function (the by-hand run, not in CI; one
#   boot, in the kernel's first preemption mode (tools/lab/preempt-modes.sh
#   --first: voluntary, or rt) unless KJIT_ATTACH_MODES says otherwise,
#   KJIT_ATTACH_BATCH 5000, a 4 h timeout).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit attach-all

seed="${KJIT_ATTACH_SEED:-$(date +%s)}"
if [ "${FULL:-0}" = 1 ]; then
  n=0 batch="${KJIT_ATTACH_BATCH:-5000}" modes="${KJIT_ATTACH_MODES:-$("$root/tools/lab/preempt-modes.sh" --first)}" tmo=14400 mem=2048
else
  n="${KJIT_ATTACH_N:-3000}" batch="${KJIT_ATTACH_BATCH:-1000}" modes="${KJIT_ATTACH_MODES:-$("$root/tools/lab/preempt-modes.sh")}" tmo=1200 mem=1024
fi
echo "attach-all: seed $seed (KJIT_ATTACH_SEED=$seed repeats the choice), $([ "$n" = 0 ] && echo "every attachable function" || echo "$n functions"), $batch a request"
# What kjit calls while it runs, and what ftrace may let it attach; and the
# interrupt exit after kjit's own irq_work (an entry there must not raise
# that irq_work again).
own=(_raw_spin_lock_irqsave _raw_spin_unlock_irqrestore _raw_spin_lock _raw_spin_unlock
 _raw_spin_trylock _raw_spin_lock_irq _raw_spin_unlock_irq _raw_spin_lock_bh _raw_spin_unlock_bh
 __rcu_read_lock __rcu_read_unlock rcu_read_unlock_strict rcu_read_unlock_special
 preempt_schedule preempt_schedule_notrace preempt_schedule_common preempt_count_add preempt_count_sub
 __cond_resched irq_work_queue irq_work_sync queue_work_on __queue_work
 __kmalloc kmalloc_trace __kmalloc_node kfree kvmalloc_node kvfree vfree
 sprint_symbol kallsyms_lookup_size_offset is_module_text_address within_kprobe_blacklist
 search_exception_tables find_bug copy_from_kernel_nofault
 get_state_synchronize_rcu start_poll_synchronize_rcu synchronize_rcu synchronize_rcu_tasks
 mutex_lock mutex_unlock ftrace_location unwind_next_frame __unwind_start
 irq_exit_rcu)
# Of those, the lock and RCU functions kjit must attach (not refuse) where
# the kernel has them as functions (_raw_spin_unlock is inlined on 6.1's
# rt): the guest checks each one (attach-all-guest.sh, MUST).
must=(_raw_spin_lock_irqsave _raw_spin_unlock_irqrestore _raw_spin_lock _raw_spin_unlock
 _raw_spin_trylock _raw_spin_lock_irq _raw_spin_unlock_irq _raw_spin_lock_bh _raw_spin_unlock_bh
 __rcu_read_lock __rcu_read_unlock rcu_read_unlock_special mutex_lock mutex_unlock
 get_state_synchronize_rcu start_poll_synchronize_rcu synchronize_rcu synchronize_rcu_tasks)

verdict_begin attach-all
for mode in $modes; do
  share="$B/guest-attach-all-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_program "$share" workload
  share_script "$share" "$root/tests/guest/attach-all-guest.sh" \
    SEED="$seed" NRANDOM="$n" BATCH="$batch" ITERS="${KJIT_ATTACH_ITERS:-1}" OWN="${own[*]}" MUST="${must[*]}"
  append="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  echo "attach-all: booting ($mode preemption)"
  rc=0
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem "$mem" \
     --timeout "${KJIT_ATTACH_TIMEOUT:-$tmo}" --tcg-single ${append:+--append "$append"} || rc=$?
  verdict_boot "$share" "$rc" ATTACH-ALL-GUEST-DONE "$mode"
  verdict_expect_checks "$share" "$root/tests/guest/checks/attach_all.list" "$mode"
  [ ! -f "$share/random-summary.txt" ] || sed "s/^/attach-all: $mode: /" "$share/random-summary.txt"
done
[ "$VERDICT_FAIL" = 0 ] || echo "attach-all: seed $seed (KJIT_ATTACH_SEED=$seed repeats the choice)"
verdict_end; exit $?
