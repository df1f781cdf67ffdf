/* SPDX-License-Identifier: GPL-2.0 */
/* reclaim_work.c: reclaiming a full code-cache epoch from a context that
 * may sleep.  Kicked by every way out of or into the engine (the entry
 * decision, the exit gates, the scheduler stub, the text-poke handler);
 * above the engine host, which does the reclaim. */
#ifndef KJIT_RECLAIM_WORK_H
#define KJIT_RECLAIM_WORK_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/atomic.h>
#include "entry_policy.h"
#include "kjit/engine.h"

/* Raises the irq_work that queues the reclaim work. */
void kjit_reclaim_raise(void);
/* Set from a kick until its reclaim ran (reclaim_work.c). */
extern atomic_t kjit_reclaim_queued;

/* Asks for a reclaim if the engine wants one; any context.  Inline: the
 * entry path and the gates ask on every pass, and only the answer "yes"
 * needs more than one call. */
static __always_inline void kjit_reclaim_kick(void)
{
	if (unlikely(kjit_engine_reclaim_pending()) && READ_ONCE(kjit_entry_enabled) &&
	    !atomic_read(&kjit_reclaim_queued) && !atomic_xchg(&kjit_reclaim_queued, 1))
		kjit_reclaim_raise();
}

/* Waits for a raised kick and a queued reclaim to finish (unload, after
 * kjit_entry_enabled went false, so none is raised again). */
void kjit_reclaim_exit(void);

#endif
