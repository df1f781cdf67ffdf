// SPDX-License-Identifier: GPL-2.0
/* The direct-call trampoline's lock-free table (see entry_table.h).
 *
 * Writers hold kjit_entry_table_lock (attach/detach under the attach mutex,
 * fills from any context, invalidations before quiescence); readers are the
 * trampoline and the C slow path, with single 64-bit loads.  Keys are never
 * moved or removed while a direct ops may call the trampoline, so linear
 * probing stays valid for lock-free readers; a detached key keeps its slot
 * with state KJIT_ENTRY_DETACHED. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>
#include "entry_table.h"

u64 kjit_entry_slots[KJIT_ENTRY_SLOTS];
unsigned long kjit_stop_cache[KJIT_STOP_SLOTS];
DEFINE_PER_CPU(u64, kjit_fast_entry_count);

static DEFINE_RAW_SPINLOCK(kjit_entry_table_lock);
static u32 table_gen;

static inline u32 key_of(unsigned long ip5)
{
	return (u32)ip5;
}

static inline u32 home_of(unsigned long ip5)
{
	return (u32)(ip5 >> 4) & (KJIT_ENTRY_SLOTS - 1);   /* as the trampoline */
}

static inline u32 stop_home(unsigned long a)
{
	return (u32)(a ^ (a >> 8)) & (KJIT_STOP_SLOTS - 1);  /* as the trampoline */
}

static inline bool in_top_2g(unsigned long a)
{
	return (a >> 31) == (~0ul >> 31);
}

/* The slot holding ip5's key, or -1 (lock-free). */
static int find(unsigned long ip5)
{
	u32 i, h = home_of(ip5);

	for (i = 0; i < KJIT_ENTRY_SLOTS; i++) {
		u32 s = (h + i) & (KJIT_ENTRY_SLOTS - 1);
		u64 v = READ_ONCE(kjit_entry_slots[s]);

		if (!v)
			return -1;
		if ((u32)(v >> 32) == key_of(ip5))
			return s;
	}
	return -1;
}

static void set_state(u32 s, u64 state)
{
	u64 v = READ_ONCE(kjit_entry_slots[s]);

	WRITE_ONCE(kjit_entry_slots[s], (v & ~0xffffffffull) | state);
}

bool kjit_entry_table_attach(unsigned long ip5)
{
	unsigned long flags;
	bool ok = false;
	u32 i, h = home_of(ip5);
	int s;

	if (!in_top_2g(ip5))
		return false;
	raw_spin_lock_irqsave(&kjit_entry_table_lock, flags);
	s = find(ip5);
	if (s >= 0) {
		set_state(s, KJIT_ENTRY_ATTACHED);
		ok = true;
	} else {
		for (i = 0; i < KJIT_ENTRY_SLOTS && !ok; i++) {
			u32 t = (h + i) & (KJIT_ENTRY_SLOTS - 1);

			if (!kjit_entry_slots[t]) {
				WRITE_ONCE(kjit_entry_slots[t], (u64)key_of(ip5) << 32 | KJIT_ENTRY_ATTACHED);
				ok = true;
			}
		}
	}
	raw_spin_unlock_irqrestore(&kjit_entry_table_lock, flags);
	return ok;
}

void kjit_entry_table_detach(unsigned long ip5)
{
	unsigned long flags;
	int s;

	raw_spin_lock_irqsave(&kjit_entry_table_lock, flags);
	s = find(ip5);
	if (s >= 0)
		set_state(s, KJIT_ENTRY_DETACHED);
	raw_spin_unlock_irqrestore(&kjit_entry_table_lock, flags);
}

void kjit_entry_table_clear(void)
{
	unsigned long flags;
	u32 i;

	BUILD_BUG_ON(KJIT_NMI_MASK != NMI_MASK);
	raw_spin_lock_irqsave(&kjit_entry_table_lock, flags);
	for (i = 0; i < KJIT_ENTRY_SLOTS; i++)
		WRITE_ONCE(kjit_entry_slots[i], 0);
	table_gen++;
	raw_spin_unlock_irqrestore(&kjit_entry_table_lock, flags);
}

bool kjit_entry_table_attached(unsigned long ip5)
{
	int s = find(ip5);

	return s >= 0 && (u32)READ_ONCE(kjit_entry_slots[s]) != KJIT_ENTRY_DETACHED;
}

bool kjit_entry_table_known(unsigned long ip5)
{
	return find(ip5) >= 0;
}

u32 kjit_entry_table_gen(void)
{
	return READ_ONCE(table_gen);
}

void kjit_entry_table_fill(unsigned long ip5, u64 target, unsigned long stop, u32 gen)
{
	unsigned long flags;
	int s;

	if (!in_top_2g(target) || !in_top_2g(stop))
		return;
	raw_spin_lock_irqsave(&kjit_entry_table_lock, flags);
	if (table_gen == gen) {
		s = find(ip5);
		if (s >= 0 && (u32)kjit_entry_slots[s] != KJIT_ENTRY_DETACHED) {
			WRITE_ONCE(kjit_stop_cache[stop_home(stop)], stop);
			set_state(s, (u32)target);
		}
	}
	raw_spin_unlock_irqrestore(&kjit_entry_table_lock, flags);
}

void kjit_entry_table_invalidate(void)
{
	unsigned long flags;
	u32 i;

	raw_spin_lock_irqsave(&kjit_entry_table_lock, flags);
	table_gen++;
	for (i = 0; i < KJIT_ENTRY_SLOTS; i++) {
		u64 v = kjit_entry_slots[i];

		if ((u32)v & 0x80000000u)
			WRITE_ONCE(kjit_entry_slots[i], (v & ~0xffffffffull) | KJIT_ENTRY_ATTACHED);
	}
	for (i = 0; i < KJIT_STOP_SLOTS; i++)
		WRITE_ONCE(kjit_stop_cache[i], 0);
	raw_spin_unlock_irqrestore(&kjit_entry_table_lock, flags);
}

u64 kjit_entry_table_fast_entries(void)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(&kjit_fast_entry_count, cpu));
	return n;
}
