// SPDX-License-Identifier: GPL-2.0
/*
 * Waiting until no task can still execute, or return into, a range of the
 * code cache (before an epoch's memory is reused, and before unload).
 *
 * RCU-tasks alone is not enough.  It counts a task as quiescent once it has
 * switched voluntarily, and a task that takes a page fault on user memory
 * from translated code (copy_to_user in the cache, with its mirrored
 * extable entry) may sleep in the fault handler (mmap_lock, I/O,
 * userfaultfd) with the cache address in the exception frame: when it wakes
 * it returns into the cache.  Calls from the cache push original return
 * addresses, so such exception frames (and a task interrupted in the cache)
 * are the only way a cache address is live on a stack.
 *
 * So after the grace period every other task is checked:
 *  - not on a CPU: its stack is unwound (ORC) and every frame, exception
 *    frames included, must lie outside the range;
 *  - on a CPU: an IPI to that CPU unwinds from its handler into the
 *    interrupted context (user mode is clean).
 * A task that switched while it was looked at is looked at again, alone:
 * under load (TCG especially) a whole pass rarely sees every task still.
 * The wait has no time limit (unloading under a userfaultfd stall must stay
 * safe); it says who it waits for every ten seconds or so.
 */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/smp.h>
#include <asm/ptrace.h>
#include "quiesce.h"
#include "entry_table.h"
#include "cache_mem.h"
#include "symbols.h"

#define KJIT_QUIESCE_DEPTH 96

static unsigned int (*p_save_tsk)(struct task_struct *t, unsigned long *store, unsigned int size,
				  unsigned int skip);

struct kjit_range {
	unsigned long lo, hi;
};

enum holds { CLEAN, HOLDS, CHANGED };

struct cpu_look {
	struct task_struct *task;
	struct kjit_range r;
	enum holds result;
	unsigned long store[KJIT_QUIESCE_DEPTH];
};

/* The innermost cache address decides: in the range, the task holds it;
 * elsewhere in the cache, the unwinder had no ORC data from there on (the
 * frames it reports after it are guesses), so the task is looked at again
 * later.  No cache address at all: clean. */
static enum holds judge(const unsigned long *e, unsigned int n, const struct kjit_range *r)
{
	unsigned long cache_lo, cache_hi;
	unsigned int i;

	kjit_mem_cache_range(&cache_lo, &cache_hi);
	for (i = 0; i < n; i++) {
		if (e[i] >= r->lo && e[i] < r->hi)
			return HOLDS;
		if (e[i] >= cache_lo && e[i] < cache_hi)
			return CHANGED;
	}
	return CLEAN;
}

static unsigned long switches(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/* IPI handler: the task this CPU was running when interrupted.  The
 * call-function IPI does not set irq_regs (only the timer and device
 * interrupts do), so the interrupted context is reached by unwinding from
 * here: the IPI's own frames, then its exception frame's ip (the
 * interrupted instruction) and that context's callers; an interrupted user
 * mode ends the trace.  Judging a running task by irq_regs made every task
 * that was on a CPU at each look "hold" the range: a reclaim waited for as
 * long as a busy task kept running, declining every entry meanwhile. */
static void look_here(void *arg)
{
	struct cpu_look *c = arg;
	unsigned int n;

	if (current != c->task) {
		c->result = CHANGED;
		return;
	}
	n = stack_trace_save(c->store, KJIT_QUIESCE_DEPTH, 0);
	c->result = judge(c->store, n, &c->r);
}

/* A task preempted (runnable, off its CPU) inside a kretprobed function:
 * unwinding it meets the rethook trampoline, and rethook refuses (with a
 * WARN) to find the real return address of a task that may run, so the
 * unwinder cannot see past it.  It is looked at again once it ran on. */
static bool preempted_under_rethook(struct task_struct *t)
{
#ifdef CONFIG_RETHOOK
	return task_is_running(t) && READ_ONCE(t->rethooks.first);
#else
	return false;
#endif
}

static enum holds look_at(struct task_struct *t, const struct kjit_range *r, struct cpu_look *c)
{
	unsigned long sw = switches(t);
	unsigned int n, cpu;

	if (READ_ONCE(t->on_cpu)) {
		cpu = task_cpu(t);
		if (cpu == get_cpu()) {         /* mid-switch on this CPU */
			put_cpu();
			return CHANGED;
		}
		put_cpu();
		c->task = t;
		c->r = *r;
		c->result = CHANGED;
		if (smp_call_function_single(cpu, look_here, c, 1))
			return CHANGED;
		return switches(t) == sw ? c->result : CHANGED;
	}
	if (preempted_under_rethook(t))
		return CHANGED;
	n = p_save_tsk(t, c->store, KJIT_QUIESCE_DEPTH, 0);
	if (READ_ONCE(t->on_cpu) || switches(t) != sw)
		return CHANGED;
	return judge(c->store, n, r);
}

/* Tasks not proved clean in the first pass, held by a reference and looked
 * at again until they are.  A clean task stays clean: nothing enters a
 * retired epoch (entries and new links go to the active one) or, after
 * detach, the cache at all; a task forked later starts on a fresh stack. */
#define KJIT_QUIESCE_PENDING 1024

static unsigned int first_pass(const struct kjit_range *r, struct cpu_look *c,
			       struct task_struct **pending, bool *overflow)
{
	struct task_struct *g, *t;
	unsigned int n = 0;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		enum holds h = CHANGED;
		int tries;

		if (t == current)
			continue;
		for (tries = 0; tries < 4 && h == CHANGED; tries++)
			h = look_at(t, r, c);
		if (h == CLEAN)
			continue;
		if (n == KJIT_QUIESCE_PENDING) {
			*overflow = true;
			break;
		}
		get_task_struct(t);
		pending[n++] = t;
	}
	rcu_read_unlock();
	return n;
}

static void wait_until_clean(struct task_struct *t, const struct kjit_range *r, struct cpu_look *c)
{
	unsigned long waited = 0;
	enum holds h;

	while (!(READ_ONCE(t->exit_state) & EXIT_DEAD) && (h = look_at(t, r, c)) != CLEAN) {
		if (++waited % 2000 == 300)
			pr_warn("waiting for task %d (%s, %s) to leave code cache range %lx-%lx (%lu tries)\n",
				task_pid_nr(t), t->comm, h == HOLDS ? "holds it" : "unsettled",
				r->lo, r->hi, waited);
		usleep_range(2000, 5000);
	}
}

void kjit_quiesce_range(unsigned long lo, unsigned long hi)
{
	struct kjit_range r = { lo, hi };
	struct task_struct **pending;
	struct cpu_look *c;
	unsigned int n, i;
	bool overflow;

	might_sleep();
	/* before the wait: the trampoline enters nothing it holds any more */
	kjit_entry_table_invalidate();
	synchronize_rcu_tasks();
	synchronize_rcu();
	c = kmalloc(sizeof(*c), GFP_KERNEL | __GFP_NOFAIL);
	pending = kvmalloc_array(KJIT_QUIESCE_PENDING, sizeof(*pending), GFP_KERNEL | __GFP_NOFAIL);
	do {
		overflow = false;
		n = first_pass(&r, c, pending, &overflow);
		for (i = 0; i < n; i++) {
			wait_until_clean(pending[i], &r, c);
			put_task_struct(pending[i]);
		}
	} while (overflow);
	kvfree(pending);
	kfree(c);
}

int kjit_quiesce_init(void)
{
	p_save_tsk = (void *)kjit_ksym("stack_trace_save_tsk");
	if (!p_save_tsk) {
		pr_err("stack_trace_save_tsk not found: cannot prove the cache unused\n");
		return -ENOENT;
	}
	return 0;
}
