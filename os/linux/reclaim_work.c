// SPDX-License-Identifier: GPL-2.0
/* Reclaim work.  When the engine's active code-cache epoch fills up it
 * moves to the other one and asks for the full one to be reclaimed from a
 * context that may sleep (kjit_engine_reclaim_pending()): a work item.
 * The gates and the entry handlers run inside arbitrary kernel code, which
 * may hold a runqueue or pi lock (wake_up_new_task translated from fork),
 * so they must not queue the work themselves: queueing wakes a worker, and
 * the wake-up takes those locks.  They raise an irq_work instead
 * (lock-free, safe in any context); it runs when this CPU next enables
 * interrupts, by which time every lock taken with interrupts off has been
 * dropped. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include "reclaim_work.h"
#include "engine_host.h"

/* Set by the kick until the reclaim it queued has run: one kick per
 * reclaim.  A reclaim waits until no task is in the retired half, and
 * entries keep arriving meanwhile; with a kick per entry, an attached
 * function that the kick itself runs through (irq_exit_rcu after the
 * irq_work's interrupt) raised the irq_work again from its own interrupt,
 * for ever, and the task it kept interrupting never left the code it was
 * interrupted in.  A half retired while the reclaim ran is
 * kicked by the next entry. */
atomic_t kjit_reclaim_queued;

/* At most one reclaim every KJIT_RECLAIM_GAP_MS.  A reclaim takes tens of
 * milliseconds; when the working set does not fit in a half of the cache,
 * every reclaim hands back a half that the next build fills at once, and
 * the workload spends its time rebuilding the same code (stress-ng's flock
 * and fork with every system call attached and a 256 KiB cache: without a
 * gap 731 reclaims, 1.5 million blocks built, an 8 s stressor took 122 s;
 * with 500 ms 34 reclaims, 74,304 blocks, 9 s).  Between a fill and the
 * next reclaim entries run natively, which the calls-covered figure shows. */
#define KJIT_RECLAIM_GAP_MS 500
static unsigned long reclaim_done;     /* jiffies at the end of the last */

/* Frees the retired half, keeps the active one: a flush here would also
 * retire the half the full one just handed translation to, and every
 * cache-full event would throw the freshly rebuilt working set away. */
static void kjit_reclaim_fn(struct work_struct *w)
{
	atomic64_inc(&kjit_counts.reclaims);
	kjit_host_reclaim();
	WRITE_ONCE(reclaim_done, jiffies);
	atomic_set(&kjit_reclaim_queued, 0);
}
static DECLARE_DELAYED_WORK(kjit_reclaim_work, kjit_reclaim_fn);

static void kjit_reclaim_kick_fn(struct irq_work *w)
{
	unsigned long next = READ_ONCE(reclaim_done) + msecs_to_jiffies(KJIT_RECLAIM_GAP_MS);

	schedule_delayed_work(&kjit_reclaim_work, time_after(next, jiffies) ? next - jiffies : 0);
}
/* A hard irq_work, run from the interrupt even on PREEMPT_RT.  There a
 * plain one runs in a thread: the gate after __schedule kicks on every pass
 * while a reclaim is pending, each kick woke the thread and set
 * need_resched, and a task in preempt_schedule()'s loop went through
 * __schedule and the gate again for ever, never switching voluntarily
 * (which the reclaim then waited for).  Queueing the work from the
 * interrupt takes only raw locks. */
static struct irq_work kjit_reclaim_kick_work = IRQ_WORK_INIT_HARD(kjit_reclaim_kick_fn);

void kjit_reclaim_raise(void)
{
	irq_work_queue(&kjit_reclaim_kick_work);
}

void kjit_reclaim_exit(void)
{
	irq_work_sync(&kjit_reclaim_kick_work);
	cancel_delayed_work_sync(&kjit_reclaim_work);
}
