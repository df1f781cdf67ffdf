// SPDX-License-Identifier: GPL-2.0
/*
 * Waiting until no task can still execute, or return into, a range of the
 * code cache (before an epoch's memory is reused, and before unload).
 *
 * Calls from the cache push original return addresses, so a cache address
 * is live on a stack only in an exception frame: a task interrupted in the
 * cache, or one that took a page fault on user memory from translated code
 * (copy_to_user in the cache, with its mirrored extable entry) and sleeps
 * in the fault handler (mmap_lock, I/O, userfaultfd) until it returns into
 * the cache.  Elsewhere a cache address lives for a few instructions in a
 * register or a non-return stack slot: in kjit's own code (the entry
 * trampoline between its table load and its return, a gate between the
 * engine's answer and the jump), and in ftrace's trampolines (the pt_regs
 * ip the IPMODIFY handler set, until it is copied into the return slot).
 *
 * So every other task is checked (walk):
 *  - not on a CPU: its stack is unwound (ORC) and every frame, exception
 *    frames included, must lie outside the range;
 *  - on a CPU: an IPI to that CPU unwinds from its handler into the
 *    interrupted context (user mode is clean);
 *  - where the frames cannot settle it (a frame elsewhere in the cache,
 *    where ORC data ends; a task that can run on, on a CPU or preempted,
 *    with a frame in kjit's code, an ftrace trampoline or text of no image
 *    or module), its live stack is searched word by word: no word in the
 *    range proves it clean, else it is looked at again.
 * A task blocked in kjit's code (an ioctl waiting for a lock) holds no
 * cache address: nothing that jumps into the cache sleeps.  RCU-tasks
 * (every task switched voluntarily) would cover the register windows too,
 * but under a busy workload one grace period took 0.4 to 4 s (a task that
 * keeps making system calls rarely switches), and while a reclaim waits
 * with both halves of the cache retired every entry runs natively.  A
 * normal RCU grace period is still awaited: the engine's lock-free readers
 * and the entry paths that run with preemption off.  Not an expedited one:
 * with preemptible RCU (preempt=full, PREEMPT_RT) an expedited grace period
 * in flight makes every rcu_read_unlock() with interrupts off queue the
 * per-CPU deferred-quiescent-state irq_work, and Debian's 6.1 kernels
 * re-initialise that irq_work while it can still be queued
 * (rcu_read_unlock_special), which loops irq_work_run_list() forever with
 * interrupts off.  On kernels without RCU boosting an expedited grace
 * period is the only way into that path; kjit starts none.
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
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>
#include "quiesce.h"
#include "entry_table.h"
#include "cache_mem.h"
#include "symbols.h"

/* Frames walked before the stack is searched instead (a task has some 10
 * to 40). */
#define KJIT_QUIESCE_DEPTH 256

static void (*p_put_task_stack)(struct task_struct *t);
static struct module *(*p_module_text_address)(unsigned long addr);
static unsigned long stext, etext, regs_caller, regs_caller_end;

struct kjit_range {
	unsigned long lo, hi;
};

enum holds { CLEAN, HOLDS, CHANGED };

struct cpu_look {
	struct task_struct *task;
	struct kjit_range r;
	enum holds result;
};

/* Text where a task that runs on cannot hold a cache address outside its
 * stack: the kernel image's (but ftrace's SAVE_REGS trampoline) and other
 * modules'. */
static bool plain_text(unsigned long a)
{
	struct module *mod;

	if (a >= stext && a < etext)
		return a < regs_caller || a > regs_caller_end;
	preempt_disable();
	mod = p_module_text_address(a);
	preempt_enable();
	return mod && mod != THIS_MODULE;
}

/* Everything a task that is not running can still return or jump to lies
 * on its live stack, from its saved stack pointer (interrupted on a CPU:
 * from the interrupt's saved registers) up: return addresses, exception
 * frames and the registers they saved, a gate's answer in its slot.  Those
 * words are searched for an address in the range.  None: clean.  One: a
 * live frame's, or a stale word in a frame's padding, so the task is looked
 * at again later.  A live stack not on the task's stack (an interrupt's,
 * which links to further stacks): looked at again. */
static enum holds search_stack(struct task_struct *t, unsigned long live_lo, const struct kjit_range *r)
{
	unsigned long lo = (unsigned long)task_stack_page(t), hi = lo + THREAD_SIZE;
	const unsigned long *p;

	if (live_lo < lo || live_lo >= hi || (live_lo & (sizeof(long) - 1)))
		return CHANGED;
	for (p = (const unsigned long *)live_lo; p < (const unsigned long *)hi; p++) {
		unsigned long w = READ_ONCE_NOCHECK(*p);

		if (w >= r->lo && w < r->hi)
			return CHANGED;
	}
	return CLEAN;
}

/* t's frames, innermost first (t is current, or a task off every CPU whose
 * stack the caller holds; live_lo: its saved stack pointer, 0 for current,
 * whose live stack starts at the first exception frame the walk meets).
 * A frame in the range: the task holds it.  The stack is searched
 * (search_stack) where the frames cannot settle it:
 *  - at a frame in the cache outside the range: the unwinder has no ORC
 *    data there and cannot go on;
 *  - for a task that can run on (runs_on), at frames outside plain text:
 *    kjit's own code and ftrace's trampolines may hold a translation in a
 *    register or a slot that is not a return address (kjit's engine code,
 *    built outside Kbuild, has no ORC data either);
 *  - where the unwinder is lost (a frame in no text) of a task that runs on.
 * Otherwise the task is clean: a task blocked for long (a kthread, a
 * userfaultfd stall) is not held by a stale word in a frame's padding.
 * For current (the IPI handler) the walk starts in this module, and its own
 * frames are not the interrupted context's. */
static enum holds walk(struct task_struct *t, const struct kjit_range *r, bool runs_on,
		       unsigned long live_lo)
{
	unsigned long cache_lo, cache_hi, a;
	bool own = !live_lo;
	struct unwind_state s;
	unsigned int frames = 0;

	kjit_mem_cache_range(&cache_lo, &cache_hi);
	for (unwind_start(&s, t, NULL, NULL); !unwind_done(&s); unwind_next_frame(&s)) {
		struct pt_regs *regs = unwind_get_entry_regs(&s, NULL);

		if (regs && user_mode(regs))
			break;
		if (++frames > KJIT_QUIESCE_DEPTH)
			return search_stack(t, live_lo, r);
		a = unwind_get_return_address(&s);
		if (own && a && within_module(a, THIS_MODULE) && !(a >= cache_lo && a < cache_hi))
			continue;
		own = false;
		if (regs && !live_lo)
			live_lo = (unsigned long)regs;
		if (!a)                 /* not text: the unwinder is lost */
			return runs_on ? search_stack(t, live_lo, r) : CLEAN;
		if (a >= r->lo && a < r->hi)
			return HOLDS;
		if (a >= cache_lo && a < cache_hi)
			return search_stack(t, live_lo, r);
		if (runs_on && !plain_text(a))
			return search_stack(t, live_lo, r);
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

	if (current != c->task) {
		c->result = CHANGED;
		return;
	}
	c->result = walk(current, &c->r, true, 0);
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
	unsigned int cpu;
	enum holds h;
	bool runs_on;

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
	if (!try_get_task_stack(t))
		return CLEAN;           /* dead: no stack to return on */
	runs_on = READ_ONCE(t->on_rq);
	h = walk(t, r, runs_on, t->thread.sp);
	p_put_task_stack(t);
	if (READ_ONCE(t->on_cpu) || switches(t) != sw)
		return CHANGED;
	return h;
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
	p_put_task_stack = kjit_ksym_fn("put_task_stack");
	p_module_text_address = kjit_ksym_fn("__module_text_address");
	stext = kjit_ksym("_stext");
	etext = kjit_ksym("_etext");
	regs_caller = kjit_ksym("ftrace_regs_caller");
	regs_caller_end = kjit_ksym("ftrace_regs_caller_end");
	if (!p_put_task_stack || !p_module_text_address || !stext || !etext || !regs_caller || !regs_caller_end) {
		pr_err("text ranges not found: cannot prove the cache unused\n");
		return -ENOENT;
	}
	return 0;
}
