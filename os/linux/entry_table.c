// SPDX-License-Identifier: GPL-2.0
/* The direct-call trampoline's lock-free table (see entry_table.h).
 *
 * Writers hold kjit_entry_table_lock (attach/detach under the attach mutex,
 * fills from any context, invalidations before quiescence), taken with the
 * guard (entry_guard.h): a fill runs inside the trampoline's C path, so an
 * entry from the lock's own functions must not reach it; readers are the
 * trampoline and the C slow path, with single 64-bit loads of a slot's
 * word (key and state together).  Keys are never
 * moved or removed while a direct ops may call the trampoline, so linear
 * probing stays valid for lock-free readers; a detached key keeps its slot
 * with state KJIT_ENTRY_DETACHED. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>
#include "entry_table.h"
#include "entry_guard.h"

/* The layout entry_trampoline.S reads. */
struct kjit_entry_slot {
	u64 word;              /* key << 32 | (state ^ KJIT_ENTRY_FLIP); 0: empty */
	unsigned long stop;    /* the stop address of the last fill, or 0 */
};

struct kjit_entry_slot kjit_entry_slots[KJIT_ENTRY_SLOTS] __aligned(16);
unsigned long kjit_stop_cache[KJIT_STOP_SLOTS];
DEFINE_PER_CPU(u64, kjit_fast_entry_count);
DEFINE_PER_CPU(u64, kjit_fast_filtered_count);
u8 kjit_entry_task_filter;
DEFINE_PER_CPU(u8, kjit_entry_task_admitted);

static DEFINE_RAW_SPINLOCK(kjit_entry_table_lock);
static u32 table_gen;
/* The slots with a stop address (filled since the last invalidation), so
 * that an invalidation, run with interrupts off, walks those and not the
 * whole table.  A slot is listed exactly when its stop is not 0. */
static u32 filled[KJIT_ENTRY_SLOTS];
static u32 nfilled;

static inline u32 key_of(unsigned long ip5)
{
	return (u32)ip5;
}

static inline u32 home_of(unsigned long ip5)
{
	return ((u32)ip5 & KJIT_ENTRY_SLOT_MASK) >> 4;   /* as the trampoline */
}

static inline u32 stop_home(unsigned long a)
{
	return ((u32)a & KJIT_STOP_SLOT_MASK) >> 3;      /* as the trampoline */
}

static inline u64 word_of(u32 key, u32 state)
{
	return (u64)key << 32 | (state ^ KJIT_ENTRY_FLIP);
}

static inline u32 state_of(u64 word)
{
	return (u32)word ^ KJIT_ENTRY_FLIP;
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
		u64 v = READ_ONCE(kjit_entry_slots[s].word);

		if (!v)
			return -1;
		if ((u32)(v >> 32) == key_of(ip5))
			return s;
	}
	return -1;
}

static void set_state(u32 s, u32 state)
{
	u64 v = READ_ONCE(kjit_entry_slots[s].word);

	WRITE_ONCE(kjit_entry_slots[s].word, word_of((u32)(v >> 32), state));
}

bool kjit_entry_table_attach(unsigned long ip5)
{
	unsigned long flags;
	bool g;
	bool ok = false;
	u32 i, h = home_of(ip5);
	int s;

	if (!in_top_2g(ip5))
		return false;
	g = kjit_guard_lock(&kjit_entry_table_lock, &flags);
	s = find(ip5);
	if (s >= 0) {
		set_state(s, KJIT_ENTRY_ATTACHED);
		ok = true;
	} else {
		for (i = 0; i < KJIT_ENTRY_SLOTS && !ok; i++) {
			u32 t = (h + i) & (KJIT_ENTRY_SLOTS - 1);

			if (!kjit_entry_slots[t].word) {
				WRITE_ONCE(kjit_entry_slots[t].word, word_of(key_of(ip5), KJIT_ENTRY_ATTACHED));
				ok = true;
			}
		}
	}
	kjit_guard_unlock(&kjit_entry_table_lock, flags, g);
	return ok;
}

void kjit_entry_table_detach(unsigned long ip5)
{
	unsigned long flags;
	bool g;
	int s;

	g = kjit_guard_lock(&kjit_entry_table_lock, &flags);
	s = find(ip5);
	if (s >= 0)
		set_state(s, KJIT_ENTRY_DETACHED);
	kjit_guard_unlock(&kjit_entry_table_lock, flags, g);
}

void kjit_entry_table_clear(void)
{
	unsigned long flags;
	bool g;
	u32 i;

	BUILD_BUG_ON(KJIT_NMI_MASK != NMI_MASK);
	BUILD_BUG_ON(KJIT_NOT_TASK_MASK != (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
	BUILD_BUG_ON(sizeof(struct kjit_entry_slot) != 16);
	g = kjit_guard_lock(&kjit_entry_table_lock, &flags);
	for (i = 0; i < KJIT_ENTRY_SLOTS; i++) {
		WRITE_ONCE(kjit_entry_slots[i].word, 0);
		WRITE_ONCE(kjit_entry_slots[i].stop, 0);
	}
	nfilled = 0;
	table_gen++;
	kjit_guard_unlock(&kjit_entry_table_lock, flags, g);
}

bool kjit_entry_table_attached(unsigned long ip5)
{
	int s = find(ip5);

	return s >= 0 && state_of(READ_ONCE(kjit_entry_slots[s].word)) != KJIT_ENTRY_DETACHED;
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
	bool g;
	int s;

	if (!in_top_2g(target) || !in_top_2g(stop))
		return;
	g = kjit_guard_lock(&kjit_entry_table_lock, &flags);
	if (table_gen == gen) {
		s = find(ip5);
		if (s >= 0 && state_of(kjit_entry_slots[s].word) != KJIT_ENTRY_DETACHED) {
			/* the stop before the translation: a reader that sees
			 * this stop with the old state takes the C path, one
			 * that sees the old stop with this translation has a
			 * stop that is still known */
			WRITE_ONCE(kjit_stop_cache[stop_home(stop)], stop);
			if (!kjit_entry_slots[s].stop)
				filled[nfilled++] = s;
			WRITE_ONCE(kjit_entry_slots[s].stop, stop);
			smp_wmb();
			set_state(s, (u32)target);
		}
	}
	kjit_guard_unlock(&kjit_entry_table_lock, flags, g);
}

void kjit_entry_table_invalidate(void)
{
	unsigned long flags;
	bool g;
	u32 i;

	g = kjit_guard_lock(&kjit_entry_table_lock, &flags);
	table_gen++;
	/* only a fill stores a translation, and it lists the slot */
	for (i = 0; i < nfilled; i++) {
		u32 s = filled[i];
		u64 v = kjit_entry_slots[s].word;

		if (v && (state_of(v) & 0x80000000u))
			set_state(s, KJIT_ENTRY_ATTACHED);
		WRITE_ONCE(kjit_entry_slots[s].stop, 0);
	}
	nfilled = 0;
	for (i = 0; i < KJIT_STOP_SLOTS; i++)
		WRITE_ONCE(kjit_stop_cache[i], 0);
	kjit_guard_unlock(&kjit_entry_table_lock, flags, g);
}

/* A per-CPU counter the trampoline increments, summed over every CPU. */
static u64 sum_over_cpus(u64 __percpu *counter)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(counter, cpu));
	return n;
}

u64 kjit_entry_table_fast_entries(void)
{
	return sum_over_cpus(&kjit_fast_entry_count);
}

u64 kjit_entry_table_fast_filtered(void)
{
	return sum_over_cpus(&kjit_fast_filtered_count);
}

void kjit_entry_table_set_task_filter(u8 bits)
{
	WRITE_ONCE(kjit_entry_task_filter, bits);
}
