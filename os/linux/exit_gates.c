// SPDX-License-Identifier: GPL-2.0
/* The exit gates' C side: a direct exit whose target is not linked yet and
 * an indirect branch that missed its chain reach the engine from
 * dispatch_gates.S through here.  Leaving the cache at an entry's return
 * address (a stop address) is the end of that entry: counted, announced to
 * the plugins' on_exit, and, with flush-every-entry, followed by a flush. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include "exit_gates.h"
#include "entry_policy.h"
#include "entry_guard.h"
#include "reclaim_work.h"
#include "engine_host.h"
#include "kjit/engine.h"

/* Leaving the cache at t; true when t is an entry's return address (the
 * entry returned). */
static bool escaped(u64 t)
{
	atomic64_inc(&kjit_counts.escapes);
	if (!kjit_engine_is_stop_address(t))
		return false;
	atomic64_inc(&kjit_counts.exits);
	/* Plugins' on_exit (the engine routes every exit here while one has it). */
	kjit_engine_notify_exit(t);
	return true;
}

/* flush-every-entry (benchmarks), after an entry returned: only where
 * sleeping is allowed, outside the guard; the gate's caller has left the
 * cache (its stub's return address is gone).  Under preemptible RCU a
 * read-side section leaves preemptible() true, and the flush waits for
 * grace periods: not inside one. */
static void flush_after_exit(void)
{
	if (unlikely(READ_ONCE(kjit_policy.flush_every_entry)) && preemptible() &&
	    !rcu_preempt_depth() && READ_ONCE(kjit_entry_enabled))
		kjit_host_flush(false);
}

/* Both gates, once the engine answered t inside the guard: an escape is
 * counted, a pending reclaim kicked, then the guard left. */
static __always_inline u64 gate_done(u64 t, bool guarded)
{
	bool exited = !kjit_engine_is_cache_address(t) && escaped(t);

	kjit_reclaim_kick();
	kjit_guard_leave(guarded);
	preempt_enable_notrace();
	if (exited)
		flush_after_exit();
	return t;
}

/* Called from dispatch_gates.S with every register saved, from translated
 * code, preemptible or not.  The guard needs preemption off for its whole
 * region.  A gate finds its context's bit set only if translated code ran
 * inside kjit, which no entry allows; it goes on without touching the bit. */
u64 kjit_linux_direct_exit(u64 stub_ret)
{
	bool g;

	preempt_disable_notrace();
	g = kjit_guard_enter();
	return gate_done(kjit_engine_direct_exit(stub_ret), g);
}

u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target)
{
	bool g;

	preempt_disable_notrace();
	g = kjit_guard_enter();
	return gate_done(kjit_engine_indirect_miss(stub_ret, target), g);
}
