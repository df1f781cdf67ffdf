/* SPDX-License-Identifier: GPL-2.0 */
/* entry_policy.c: what every entry and exit applies (the policy: pid
 * filter, flush-every-entry, the active tool's entry hooks) and what they
 * count.  Written by config.c and the attach layer; read lock-free by the
 * entry decision, the exit gates and the reclaim kick on every pass, so the
 * data itself is shared here (a read is one load, as it was in one file)
 * and only changes go through functions. */
#ifndef KJIT_ENTRY_POLICY_H
#define KJIT_ENTRY_POLICY_H

#include <linux/types.h>
#include <linux/atomic.h>

/* Entries are redirected and work may be queued: true from the entry
 * layer's init until its exit begins (entry_attach.c). */
extern bool kjit_entry_enabled;

struct task_struct;
/* The task running an attach or detach (holding entry_attach.c's mutex),
 * else NULL.  Its attach or detach has ftrace rewrite the sites of up to
 * every function in one loop that never reschedules (x86's
 * ftrace_replace_code), and when everything is attached that loop's own
 * calls are entries too: entered, each of them competed for the engine
 * lock with every other CPU's translations, and attaching 34,748 functions
 * at once held a CPU for minutes (soft lockups).  Its entries run natively
 * (entry_decide.c). */
extern struct task_struct *kjit_attach_owner;

struct kjit_entry_policy {
	u32 pid;                 /* only this thread group, 0 = all */
	bool descendants;        /* ... and its descendants */
	u32 flush_every_entry;   /* flush when an entry returns (benchmarks) */
	u32 tool_hooks;          /* the active tool's entry hooks (builtin_tools.h) */
};
extern struct kjit_entry_policy kjit_policy;

/* How entries and exits went (kjitctl stats). */
struct kjit_entry_counts {
	atomic64_t entries;      /* entered the cache by the C path */
	atomic64_t declined;     /* the engine gave no translation */
	atomic64_t skipped;      /* disabled, NMI, engine lock held here, the attaching task, no stop slot, ftrace recursion */
	atomic64_t escapes;      /* left the cache through a gate */
	atomic64_t reclaims;     /* reclaim work items run */
	atomic64_t filtered;     /* the pid filter or the tool's entry filter said no */
	atomic64_t exits;        /* escapes at an entry's return address */
	atomic64_t redirected;   /* direct entries another ftrace user sent elsewhere */
};
extern struct kjit_entry_counts kjit_counts;

/* What the entry paths apply to each entry and exit: only thread group
 * `pid` is redirected (0: all; with descendants, its descendants too), the
 * cache is flushed when an entry returns (flush_every_entry), and the
 * active tool's entry filter and on-entry hook run (tool_hooks:
 * kjit_tool_entry_hooks), and the filters by task in task_filter_bits
 * (KJIT_ENTRY_ADMIT_*, entry_table.h: the tool's, the policy's) are on,
 * which the trampoline applies too.  Invalidates the trampoline's stored
 * entries. */
void kjit_entry_set_policy(u32 pid, bool descendants, u32 flush_every_entry, u32 tool_hooks,
			   u8 task_filter_bits);

struct kjit_entry_counters {
	u64 entries, entry_declined, entry_skipped, gate_escapes, reclaims, filtered, exits;
	u64 fast_entries;        /* of entries: made by the trampoline without C */
	u32 direct_ops;          /* direct ops registered */
	u64 redirected;          /* direct entries another ftrace user sent elsewhere */
	u64 nested;              /* entries declined: nested in kjit (entry_guard.h) */
};
/* The trampoline's entries, which the engine's departure counts do not
 * hold, since the results were last reset (kjit_entry_reset_counts). */
void kjit_entry_reset_counts(void);
u64 kjit_entry_fast_since_reset(void);
void kjit_entry_counters(struct kjit_entry_counters *out);
/* The same counters since the results were last reset: every call of an
 * attached function in the window of the engine's departure counts. */
void kjit_entry_counters_since_reset(struct kjit_entry_counters *out);

#endif
