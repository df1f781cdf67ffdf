// SPDX-License-Identifier: GPL-2.0
/* callstack: a kernel-only variant of plugins/calltrace.c for folded stacks.
 * The example plugin records call targets only; this one records entry,
 * call and return events with the thread id and the stack pointer, into a
 * vmalloc ring shared by all CPUs.  The stack pointer gives the depth
 * without per-task state: a call made with rsp = S returns with rsp = S-8 at
 * its ret, and a frame whose call was made at S is over as soon as the same
 * thread makes a call at S' >= S (it returned through code that was not
 * translated).  kjitctl rebuilds the stacks from that (tools/kjitctl).
 * Events from interrupt context are dropped.
 *
 * Instructions per call: every block adds its instruction count to a
 * per-CPU counter (inlined, `add qword gs:[...], n` as plugins/icount.c),
 * and every event stores the running CPU's counter and the thread's
 * context-switch count.  A call's instructions are its return's counter
 * minus its call's when the thread was not switched out in between (same
 * switch count, hence the same CPU and no other thread's translated code
 * between the two); otherwise the count would mix threads and the report
 * says the call was not measured.  Interrupts that run translated code
 * meanwhile are counted in.  Per-task counters (preempt notifiers, as
 * kcov.c) would also measure calls that sleep, but need a notifier on
 * every recorded task; the switch count costs one load per event. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/vmalloc.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/timekeeping.h>
#include "callstack.h"
#include "kjit/plugin.h"

static struct kjit_cs_event *cs_ring;
static u64 cs_mask;
static atomic64_t cs_head;
/* Instructions run in translated code, per CPU (kjit_alloc_percpu); NULL
 * when the engine has no per-CPU window (events then carry no count). */
static u64 *cs_insns;

/* The running CPU's count; preemption is off in the caller. */
static u64 cs_insns_now(u32 cpu, u16 *valid)
{
	const u64 *c = cs_insns ? kjit_percpu_copy(cs_insns, cpu) : NULL;

	*valid = c != NULL;
	return c ? READ_ONCE(*c) : 0;
}

static noinline void cs_put(u64 pc, u64 sp, u32 type)
{
	struct kjit_cs_event *e;
	u64 i;

	if (!in_task() || !cs_ring)
		return;
	i = atomic64_fetch_add(1, &cs_head);
	e = &cs_ring[i & cs_mask];
	e->type = 0;
	smp_wmb();
	e->pc = pc;
	e->sp = sp;
	e->pid = current->pid;
	e->switches = (u32)(current->nvcsw + current->nivcsw);
	preempt_disable();   /* the counter read is the CPU recorded */
	e->cpu = (u16)smp_processor_id();
	e->insns = cs_insns_now(e->cpu, &e->insns_valid);
	preempt_enable();
	e->ts = ktime_get_mono_fast_ns();
	smp_wmb();
	WRITE_ONCE(e->type, type);
}

/* Outlined analysis routines (they call cs_put, so never inlined). */
static void cs_on_call(u64 target, u64 sp)
{
	cs_put(target, sp, KJIT_CS_CALL);
}

static void cs_on_ret(u64 pc, u64 sp)
{
	cs_put(pc, sp, KJIT_CS_RET);
}

static void cs_instrument(struct kjit_insn *insn, void *arg)
{
	if (kjit_insn_is_call(insn))
		kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)cs_on_call, 2,
				 KJIT_ARG_BRANCH_TARGET(), KJIT_ARG_REG(KJIT_REG_RSP));
	else if (kjit_insn_is_return(insn))
		kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)cs_on_ret, 2,
				 KJIT_ARG_INSN_PC(), KJIT_ARG_REG(KJIT_REG_RSP));
}

/* Inlined by the engine into one gs-relative add (plain: no call inside). */
static void cs_count(u64 *counter, u64 n)
{
	*counter += n;
}

static void cs_instrument_block(struct kjit_block *block, void *arg)
{
	if (cs_insns)
		kjit_insert_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, (void *)cs_count, 2,
				 KJIT_ARG_PTR(cs_insns),
				 KJIT_ARG_CONST(kjit_block_insn_count(block)));
}

static const struct kjit_plugin cs_plugin = {
	.name = "callstack",
	.on_block = cs_instrument_block,
	.on_insn = cs_instrument,
};

/* Called by the ftrace handler: sp = regs->sp at the fentry site, which
 * points at the return address; the caller's rsp before its call is sp+8. */
void kjit_callstack_entry(u64 pc, u64 sp)
{
	cs_put(pc, sp + 8, KJIT_CS_ENTRY);
}

int kjit_callstack_init(u32 capacity_pow2)
{
	if (!capacity_pow2 || (capacity_pow2 & (capacity_pow2 - 1)))
		return -EINVAL;
	if (!cs_ring) {
		cs_ring = vzalloc(sizeof(*cs_ring) * capacity_pow2);
		if (!cs_ring)
			return -ENOMEM;
		cs_mask = capacity_pow2 - 1;
	}
	/* The engine's data window is handed out again for every tool start. */
	cs_insns = kjit_alloc_percpu(sizeof(*cs_insns));
	kjit_callstack_reset();
	return 0;
}

void kjit_callstack_reset(void)
{
	if (cs_ring)
		memset(cs_ring, 0, sizeof(*cs_ring) * (cs_mask + 1));
	atomic64_set(&cs_head, 0);
}

void kjit_callstack_free(void)
{
	vfree(cs_ring);
	cs_ring = NULL;
}

const struct kjit_plugin *kjit_callstack_plugin(void)
{
	return &cs_plugin;
}

const struct kjit_cs_event *kjit_callstack_ring(u64 *head, u64 *cap)
{
	*head = atomic64_read(&cs_head);
	*cap = cs_mask + 1;
	return cs_ring;
}
