/* SPDX-License-Identifier: GPL-2.0 */
/* sched_resume.c: following a task through a sleep, so that an invocation
 * that blocks continues in the code cache when it runs again.  Same layer as
 * entry_attach.c, above reclaim_work.c (it kicks the reclaim); module.c
 * starts and stops it, dispatch_gates.S calls its two C halves. */
#ifndef KJIT_SCHED_RESUME_H
#define KJIT_SCHED_RESUME_H

#include <linux/types.h>

/* `return_stub` is kjit_sched_return (dispatch_gates.S).  0, or -errno when
 * the scheduler hook cannot be installed: then translated calls into the
 * scheduler go to it directly and the task continues natively after it
 * (kjit_sched_resume_active() is false, every such sleep is counted). */
int kjit_sched_resume_init(void (*return_stub)(void));
/* Stops following sleeps and waits until no task can return through the
 * stub; the gate stays harmless (it then goes straight to the scheduler). */
void kjit_sched_resume_exit(void);
bool kjit_sched_resume_active(void);
/* Around re-creating the engine (config.c): no task can be between the gate
 * and the stub's call into the engine while it is paused; sleepers that
 * wake meanwhile continue natively (counted). */
void kjit_sched_resume_pause(void);
void kjit_sched_resume_unpause(void);

struct kjit_sleep_counters {
	u64 followed;       /* sleeps (context switches) through the gate        */
	u64 resumed;        /* ... that went on in the cache when they ran again */
	u64 sleeping;       /* tasks asleep now whose return will be retargeted  */
	u64 left_full;      /* not followed: the sleepers' table was full         */
	u64 left_off;       /* not followed: not active (unloading, no hook)      */
	u64 left_native;    /* woke, but the engine declined the resume address   */
	u64 task_exits;     /* invocations that ended in the task's exit          */
	u64 lost;           /* the saved return slot changed: not retargeted      */
	u64 left_hooked;    /* not followed: another tool hooks __schedule        */
};
void kjit_sleep_counters(struct kjit_sleep_counters *out);
/* Zeroes them (sleeping is not a count: it stays). */
void kjit_sleep_counters_reset(void);

#endif
