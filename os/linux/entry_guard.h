/* SPDX-License-Identifier: GPL-2.0 */
/* entry_guard.c: the per-CPU guard that keeps kjit from entering itself.
 *
 * kjit's own paths (the trampoline's C path, the IPMODIFY handler, the
 * dispatcher gates' C side, the scheduler stub's C side, and every holder
 * of the engine lock) call kernel functions that may be attached: the
 * lock's _raw_spin_lock_irqsave/_raw_spin_unlock_irqrestore, RCU's read
 * side, irq_work_queue, the allocators, kallsyms.  An entry into one of
 * them from inside kjit would recurse (the nested entry takes the same
 * path) or spin on the engine lock this CPU holds.  So each of those paths
 * sets its context's bit in one per-CPU byte, kjit_guard, for as long as it
 * runs, and every way into the engine declines (runs the function
 * natively, counted as entry_nested) while the bit of its own context is
 * set.  entry_trampoline.S's fast path only asks whether the byte is zero;
 * the C path asks for the bit.
 *
 * One bit per context (task, softirq, hardirq, NMI; interrupt_context_level)
 * because an interrupt that arrives while a task is inside kjit with
 * interrupts on is not nested in kjit: it may enter the engine (the engine
 * lock is only held with interrupts off).  Each context clears its bit
 * before it returns to the one it interrupted, so a plain read-modify-write
 * of the byte is never torn by one.
 *
 * The bit belongs to the CPU: preemption (or interrupts) must be off from
 * kjit_guard_enter to kjit_guard_leave, or another task would run with it
 * set or the bit would be cleared on another CPU. */
#ifndef KJIT_ENTRY_GUARD_H
#define KJIT_ENTRY_GUARD_H

#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

DECLARE_PER_CPU(u8, kjit_guard);     /* read by entry_trampoline.S */

static __always_inline u8 kjit_guard_bit(void)
{
	return 1u << interrupt_context_level();
}

/* Whether this context is inside kjit on this CPU. */
static __always_inline bool kjit_guard_held(void)
{
	return this_cpu_read(kjit_guard) & kjit_guard_bit();
}

/* Sets this context's bit; false when it was set already (the caller runs
 * inside kjit and must leave the bit alone: kjit_guard_leave(false)). */
static __always_inline bool kjit_guard_enter(void)
{
	u8 bit = kjit_guard_bit();

	if (this_cpu_read(kjit_guard) & bit)
		return false;
	this_cpu_or(kjit_guard, bit);
	return true;
}

static __always_inline void kjit_guard_leave(bool entered)
{
	if (entered)
		this_cpu_and(kjit_guard, (u8)~kjit_guard_bit());
}

/* A raw spinlock that a way into the engine also takes (the engine lock,
 * the trampoline's table lock) is held with interrupts off and the guard
 * set, whoever holds it: its own functions (_raw_spin_lock,
 * _raw_spin_unlock) and anything run under it may be attached, and an
 * entry from there would take it again on this CPU.  Interrupts go off
 * first, then the guard, then the lock; the other way round on release.
 * Preemption stays off until interrupts are back on, so a reschedule asked
 * for meanwhile happens then, as after raw_spin_unlock_irqrestore.
 * Returns what kjit_guard_unlock needs. */
static __always_inline bool kjit_guard_lock(raw_spinlock_t *lock, unsigned long *flags)
{
	bool entered;

	local_irq_save(*flags);
	entered = kjit_guard_enter();
	raw_spin_lock(lock);
	return entered;
}

static __always_inline void kjit_guard_unlock(raw_spinlock_t *lock, unsigned long flags,
					      bool entered)
{
	preempt_disable();
	raw_spin_unlock(lock);
	kjit_guard_leave(entered);
	local_irq_restore(flags);
	preempt_enable();
}

/* An entry declined because it was nested in kjit (kjitctl stats:
 * entry_nested). */
void kjit_guard_count_nested(void);
u64 kjit_guard_nested(void);

#endif
