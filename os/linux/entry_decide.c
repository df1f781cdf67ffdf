// SPDX-License-Identifier: GPL-2.0
/* The entry decision.  Entry redirection moves the return of an attached
 * function's fentry call from func+MCOUNT_INSN_SIZE to the code-cache
 * translation of func+MCOUNT_INSN_SIZE, by one of two paths (attached by
 * entry_attach.c):
 *  - a direct call (entry_direct.c, entry_trampoline.S): the fentry site
 *    calls kjit's trampoline, which enters without C when entry_table.c
 *    knows the translation, and calls kjit_direct_slow otherwise;
 *  - where that cannot be used (another direct user on the function, such
 *    as a BPF trampoline; direct_entry=0), one shared ftrace_ops with
 *    SAVE_REGS|IPMODIFY (as livepatch does) and kjit_ftrace_handler.
 * Both decide an entry in entry_decide().  Registers and stack are exactly
 * as at the original site; the function's return address (parent_ip) is a
 * stop address, so the task leaves the cache through a gate
 * (exit_gates.c) when the function returns.
 *
 * Leaving the cache is NOT always visible to the host: the engine also
 * jumps to native code directly (native exits, calls to functions it does not
 * translate).  So there is no per-task "in kjit" state.  None is needed:
 *  - re-entry is correct: a task that reaches an attached function's ftrace
 *    trampoline has already left the cache (the call runs natively), so
 *    redirecting it again starts a fresh, correct translation;
 *  - recursion: every way into the engine (the trampoline's C path, the
 *    handler, the gates' C side, the scheduler stub's in sched_resume.c,
 *    every holder of the engine lock in shim.c) runs under the per-CPU
 *    guard of entry_guard.h, and an entry that finds its context's bit set
 *    runs natively (entry_nested): kjit calls kernel functions that may be
 *    attached (the lock's own, RCU's, irq_work, kallsyms), and a nested
 *    entry would recurse or spin on the engine lock this CPU holds.  The
 *    handler and the C path also take ftrace's per-context recursion guard,
 *    as ftrace's own callbacks do.
 *
 * The active tool's filter and on-entry hook come from the tool table
 * (builtin_tools.h) through one word of the policy, tested inline.  The
 * policy's filter by task (thread, comm, cgroup, CPUs: task_filter.c) is
 * one bit of a per-CPU byte kept at every switch-in (entry_table.h). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/ftrace.h>
#include <linux/trace_recursion.h>
#include <linux/sched.h>
#include <linux/hardirq.h>
#include <linux/rcupdate.h>
#include "entry_decide.h"
#include "entry_policy.h"
#include "entry_table.h"
#include "entry_guard.h"
#include "builtin_tools.h"
#include "reclaim_work.h"
#include "shim.h"
#include "fentry.h"
#include "kjit/engine.h"

/* The IPMODIFY ops' parking address (entry_attach.c): in its filter, never
 * an entry. */
static unsigned long kjit_park_ip;

void kjit_entry_set_park_ip(unsigned long ip)
{
	kjit_park_ip = ip;
}

/* Registers an entry's return address as a stop address once (the engine's
 * lock only the first time); false when the engine's set is full. */
static bool ensure_stop(unsigned long ret)
{
	return kjit_engine_is_stop_address(ret) || kjit_engine_add_stop_address(ret) == 0;
}

/* How far up the parents the descendants filter looks (as a capture's). */
#define KJIT_MAX_GENERATIONS 16

/* Whether current passes the pid filter: its thread group is `pid` or,
 * with descendants, its parent's or an ancestor's up to
 * KJIT_MAX_GENERATIONS up is (walked under RCU, as the capture does). */
static bool pid_matches(u32 pid, bool descendants)
{
	struct task_struct *t;
	bool match = false;
	int depth;

	if (!in_task())
		return false;
	if (task_tgid_nr(current) == pid)
		return true;
	if (!descendants)
		return false;
	rcu_read_lock();
	t = current;
	for (depth = 0; depth < KJIT_MAX_GENERATIONS && !match; depth++) {
		t = rcu_dereference(t->real_parent);
		if (!t || !t->pid)
			break;             /* past init: the idle task */
		match = task_tgid_nr(t) == pid;
	}
	rcu_read_unlock();
	return match;
}

/* Whether the policy's filter by task (entry_table.h's policy bit, kept
 * by task_filter.c) lets current's entry in: in task context and admitted
 * on this CPU; true while the filter is off.  Here, not in entry_table.h:
 * in_task() reads current on PREEMPT_RT. */
static __always_inline bool policy_task_admitted(void)
{
	if (!(READ_ONCE(kjit_entry_task_filter) & KJIT_ENTRY_ADMIT_POLICY))
		return true;
	return in_task() && (this_cpu_read(kjit_entry_task_admitted) & KJIT_ENTRY_ADMIT_POLICY);
}

/* Whether an entry to ip may take the trampoline's fast path next time:
 * nothing but the jump into the cache is needed for it. */
static bool entry_needs_nothing_else(void)
{
	return READ_ONCE(kjit_entry_enabled) && !READ_ONCE(kjit_policy.pid) &&
	       !kjit_tool_entry_needs_c(READ_ONCE(kjit_policy.tool_hooks)) &&
	       !READ_ONCE(kjit_policy.flush_every_entry) && !kjit_engine_has_entry_callbacks();
}

/* One entry to ip, called from parent_ip with the function's stack pointer
 * sp (at its return address); preemption off (the caller holds ftrace's
 * recursion guard) and this context's guard bit set.  The translation to
 * enter, or 0 to run natively. */
static __always_inline u64 entry_decide(unsigned long ip, unsigned long parent_ip, unsigned long sp)
{
	unsigned long func;
	u32 pid;
	u64 target;

	if (!READ_ONCE(kjit_entry_enabled) || in_nmi() || kjit_os_lock_held_here() ||
	    (in_task() && current == READ_ONCE(kjit_attach_owner)) || !ensure_stop(parent_ip)) {
		atomic64_inc(&kjit_counts.skipped);
		return 0;
	}
	pid = READ_ONCE(kjit_policy.pid);
	if ((pid && !pid_matches(pid, READ_ONCE(kjit_policy.descendants))) ||
	    !policy_task_admitted() ||
	    !kjit_tool_entry_filter(READ_ONCE(kjit_policy.tool_hooks))) {
		atomic64_inc(&kjit_counts.filtered);
		return 0;
	}
	target = kjit_engine_enter(ip + MCOUNT_INSN_SIZE);
	kjit_reclaim_kick();
	if (!kjit_engine_is_cache_address(target)) {
		atomic64_inc(&kjit_counts.declined);
		return 0;
	}
	atomic64_inc(&kjit_counts.entries);
	/* every registered plugin's on_entry: the built-in tool and plugin
	 * modules alike */
	func = kjit_fentry_func(ip);
	kjit_engine_notify_entry(func);
	kjit_tool_on_entry(READ_ONCE(kjit_policy.tool_hooks), func, sp);
	return target;
}

static void kjit_ftrace_enter(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	u64 target;

	if (!regs) {
		atomic64_inc(&kjit_counts.skipped);
		return;
	}
	target = entry_decide(ip, parent_ip, regs->sp);
	/* regs is ftrace's saved pt_regs (SAVE_REGS): its ip is where the
	 * function goes on, on every kernel (ftrace_instruction_pointer_set
	 * and its successor ftrace_regs_set_instruction_pointer write the
	 * same field) */
	if (target)
		regs->ip = target;
}

/* The direct trampoline's C path (entry_trampoline.S): where the function
 * at ip5 - MCOUNT_INSN_SIZE goes on, ip5 itself or its translation. */
u64 kjit_direct_slow(u64 ip5, u64 parent_ip, u64 sp);
u64 kjit_direct_slow(u64 ip5, u64 parent_ip, u64 sp)
{
	unsigned long ip = ip5 - MCOUNT_INSN_SIZE;
	u32 gen = kjit_entry_table_gen();
	u64 target;
	int bit;

	if (!kjit_entry_table_attached(ip5)) {
		/* Detached, its ops still registered; or sent elsewhere by an
		 * IPMODIFY user sharing the function (entry_direct.c). */
		if (!kjit_entry_table_known(ip5))
			atomic64_inc(&kjit_counts.redirected);
		return ip5;
	}
	/* nested in kjit (the fast path sent every entry here while the byte
	 * is set): exact even while preemptible, since a task-context bit is
	 * only ever set by a task that cannot be preempted */
	if (kjit_guard_held()) {
		kjit_guard_count_nested();
		return ip5;
	}
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		atomic64_inc(&kjit_counts.skipped);
		return ip5;
	}
	kjit_guard_enter();            /* preemption is off: the bit was clear */
	target = entry_decide(ip, parent_ip, sp);
	if (target && entry_needs_nothing_else())
		kjit_entry_table_fill(ip5, target, parent_ip, gen);
	kjit_guard_leave(true);
	ftrace_test_recursion_unlock(bit);
	return target ? target : ip5;
}

/* The ops has no FTRACE_OPS_FL_RECURSION: ftrace then calls this directly
 * from the ops' trampoline instead of through ftrace_ops_assist_func (an
 * indirect call and ~50 instructions per entry, measured with
 * bench/profile/entry-path.sh).  The same per-context recursion guard is
 * taken here, inline; it also disables preemption for the handler as the
 * assist function did. */
void kjit_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			 struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	int bit;

	if (unlikely(ip == kjit_park_ip))
		return;
	if (kjit_guard_held()) {       /* as in kjit_direct_slow */
		kjit_guard_count_nested();
		return;
	}
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		atomic64_inc(&kjit_counts.skipped);
		return;
	}
	kjit_guard_enter();
	kjit_ftrace_enter(ip, parent_ip, fregs);
	kjit_guard_leave(true);
	ftrace_test_recursion_unlock(bit);
}
