// SPDX-License-Identifier: GPL-2.0
/* The entry policy and the entry counters (entry_policy.h): one writer at a
 * time (config.c under its mutex, the attach layer at init and exit), any
 * number of lock-free readers on the entry and exit paths. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include "entry_policy.h"
#include "entry_direct.h"
#include "entry_table.h"
#include "entry_guard.h"

bool kjit_entry_enabled;
struct task_struct *kjit_attach_owner;
struct kjit_entry_policy kjit_policy;
struct kjit_entry_counts kjit_counts;

void kjit_entry_set_policy(u32 pid, bool descendants, u32 flush_every_entry, u32 tool_hooks,
			   u8 task_filter_bits)
{
	/* The trampoline's filters go on before, and off after, its stored
	 * entries are forgotten: no stored entry outlives a filter it was
	 * stored under. */
	kjit_entry_table_set_task_filter(READ_ONCE(kjit_entry_task_filter) | task_filter_bits);
	WRITE_ONCE(kjit_policy.tool_hooks, tool_hooks);
	WRITE_ONCE(kjit_policy.descendants, descendants);
	WRITE_ONCE(kjit_policy.pid, pid);
	WRITE_ONCE(kjit_policy.flush_every_entry, flush_every_entry);
	/* the trampoline's fast path applies no other policy: start again */
	kjit_entry_table_invalidate();
	kjit_entry_table_set_task_filter(task_filter_bits);
}

/* The trampoline's entries, and every counter, at the last reset of the
 * results.  Written by config.c under its mutex; a reader racing with a
 * reset sees a window a few calls off, never a negative one (below). */
static u64 fast_entries_base;
static struct kjit_entry_counters counters_base;

void kjit_entry_reset_counts(void)
{
	struct kjit_entry_counters now;

	kjit_entry_counters(&now);
	WRITE_ONCE(fast_entries_base, now.fast_entries);
	counters_base = now;
}

u64 kjit_entry_fast_since_reset(void)
{
	return kjit_entry_table_fast_entries() - READ_ONCE(fast_entries_base);
}

void kjit_entry_counters(struct kjit_entry_counters *o)
{
	o->entries = atomic64_read(&kjit_counts.entries) + kjit_entry_table_fast_entries();
	o->fast_entries = kjit_entry_table_fast_entries();
	o->direct_ops = kjit_direct_nops();
	o->entry_declined = atomic64_read(&kjit_counts.declined);
	o->entry_skipped = atomic64_read(&kjit_counts.skipped);
	o->gate_escapes = atomic64_read(&kjit_counts.escapes);
	o->reclaims = atomic64_read(&kjit_counts.reclaims);
	o->filtered = atomic64_read(&kjit_counts.filtered) + kjit_entry_table_fast_filtered();
	o->exits = atomic64_read(&kjit_counts.exits);
	o->redirected = atomic64_read(&kjit_counts.redirected);
	o->nested = kjit_guard_nested();
}

static u64 since(u64 now, u64 base)
{
	return now > base ? now - base : 0;
}

void kjit_entry_counters_since_reset(struct kjit_entry_counters *o)
{
	const struct kjit_entry_counters b = counters_base;

	kjit_entry_counters(o);
	o->entries = since(o->entries, b.entries);
	o->fast_entries = since(o->fast_entries, b.fast_entries);
	o->entry_declined = since(o->entry_declined, b.entry_declined);
	o->entry_skipped = since(o->entry_skipped, b.entry_skipped);
	o->gate_escapes = since(o->gate_escapes, b.gate_escapes);
	o->reclaims = since(o->reclaims, b.reclaims);
	o->filtered = since(o->filtered, b.filtered);
	o->exits = since(o->exits, b.exits);
	o->redirected = since(o->redirected, b.redirected);
	o->nested = since(o->nested, b.nested);
}
