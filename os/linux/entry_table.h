/* SPDX-License-Identifier: GPL-2.0 */
/* entry_table.c: the table the direct-call trampoline (entry_trampoline.S)
 * reads without a lock to enter the code cache without calling C: which
 * entry pcs are attached through the direct ops, the translation of each
 * where an entry needs nothing but the jump, and the stop addresses seen.
 * Below the shim, which invalidates it before every quiescence. */
#ifndef KJIT_ENTRY_TABLE_H
#define KJIT_ENTRY_TABLE_H

/* Shared with entry_trampoline.S. */
/* A power of two, twice the functions a kernel has with an fentry site
 * (about 50,000 on 6.1 with its modules): the fast path only looks at an
 * entry's home slot, so the table stays sparse.  16 bytes a slot: 2 MiB.
 * A table found full sends the request to the IPMODIFY ops (entry_attach.c). */
#define KJIT_ENTRY_SLOTS (1 << 17)
#define KJIT_STOP_SLOTS 4096           /* power of two */
#define KJIT_NMI_MASK 0x00f00000       /* NMI_MASK of preempt_count (checked at build) */
/* NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET: in_task() is false (without
 * PREEMPT_RT, where preempt_count holds them all; checked at build) */
#define KJIT_NOT_TASK_MASK 0x00ff0100

/* A slot is 16 bytes: a word, then the last stop address filled with it.
 * The word is the entry pc's low 32 bits above a state with bit 31
 * flipped.  Kernel and module text, and the code cache, lie in the top
 * 2 GiB, so 32 bits name a pc, and a state with bit 31 set is a cache
 * address (sign-extended).  A slot's byte offset is the pc's bits 4 and up,
 * masked; a stop's, its bits 3 and up. */
#define KJIT_ENTRY_SLOT_MASK ((KJIT_ENTRY_SLOTS - 1) << 4)
#define KJIT_STOP_SLOT_MASK ((KJIT_STOP_SLOTS - 1) << 3)
#define KJIT_ENTRY_FLIP 0x80000000u
#define KJIT_ENTRY_ATTACHED 0          /* attached; entries take the C path  */
#define KJIT_ENTRY_DETACHED 1          /* detached while its ops stays registered */

#ifndef __ASSEMBLY__
#include <linux/types.h>
#include <linux/percpu.h>

/* Insert or revive `ip5` (function + MCOUNT_INSN_SIZE) as attached; false
 * when the table is full.  Serialised by the caller (the attach mutex). */
bool kjit_entry_table_attach(unsigned long ip5);
void kjit_entry_table_detach(unsigned long ip5);
/* Forget every key (no direct ops is registered any more). */
void kjit_entry_table_clear(void);
/* Lock-free: ip5 is attached (its entries go into the cache). */
bool kjit_entry_table_attached(unsigned long ip5);
/* Lock-free: ip5 is attached or detached with its ops still registered. */
bool kjit_entry_table_known(unsigned long ip5);

/* The fast path: a generation is read before an entry's decision, and its
 * translation and stop address are stored only if no invalidation happened
 * since (an invalidation precedes every quiescence, so no stale translation
 * is stored once a wait has begun). */
u32 kjit_entry_table_gen(void);
void kjit_entry_table_fill(unsigned long ip5, u64 target, unsigned long stop, u32 gen);
void kjit_entry_table_invalidate(void);

/* Entries the trampoline made without C since load (the engine does not
 * count them). */
u64 kjit_entry_table_fast_entries(void);
/* Entries the trampoline sent natively since load because the task filter
 * is on and the task is not admitted (counted as filtered). */
u64 kjit_entry_table_fast_filtered(void);
/* Two filters by task may be on, each kept as one bit of a per-CPU byte
 * for the task running on that CPU: the active tool's (builtin_tools.h:
 * kcov's tasks with coverage) and the entry policy's (task_filter.c: a
 * thread, comm, cgroup or CPU list).  kjit_entry_task_filter holds the bits
 * that are on; the trampoline admits only a task whose CPU has every one of
 * them set in kjit_entry_task_admitted, in task context, and the C path
 * checks the policy's bit again (entry_decide.c: policy_task_admitted).
 * Each bit's owner sets and clears only its own bit, with a per-CPU or/and
 * (interrupt-safe). */
#define KJIT_ENTRY_ADMIT_TOOL 1u
#define KJIT_ENTRY_ADMIT_POLICY 2u
void kjit_entry_table_set_task_filter(u8 bits);
extern u8 kjit_entry_task_filter;
DECLARE_PER_CPU(u8, kjit_entry_task_admitted);

#endif /* __ASSEMBLY__ */
#endif
