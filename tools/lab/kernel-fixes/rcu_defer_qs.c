// SPDX-License-Identifier: GPL-2.0
/*
 * Lab-only workaround for a hang in Debian's 6.1 kernels (6.1.192), loaded by
 * the lab's /init on kernels that reach it on their own (RCU boosting;
 * tools/lab/kernel-fixes.sh decides).  Not part of kjit.
 *
 * rcu_read_unlock_special() re-initialises the per-CPU deferred-QS irq_work
 * (rdp->defer_qs_iw = IRQ_WORK_INIT_HARD(...)) whenever rdp->defer_qs_pending
 * is not DEFER_QS_PENDING, and rcu_preempt_deferred_qs_irqrestore() sets it
 * back to DEFER_QS_IDLE with no regard to the work it queued.  So one
 * interrupts-off stretch can queue the work, report the quiescent state and
 * re-initialise the still-queued work: its llist node is cleared and queued
 * again, the CPU's irq_work list links to itself, and irq_work_run_list()
 * loops with interrupts off.  Upstream fixed it by initialising the work
 * once, when the CPU comes up, and never in rcu_read_unlock_special() ("rcu:
 * Fix racy re-initialization of irq_work causing hangs", 61399e0c5410).
 *
 * This module does the same to the running kernel: it initialises every
 * CPU's work once (on that CPU, with interrupts off, unless it is queued),
 * then replaces each of the function's stores into the work with a jump
 * over it (text_poke_bp, one instruction at a time, as any text patcher).
 * queue_on then finds a queued work claimed and leaves it alone.  No hook
 * stays behind: tools that translate or trace the function see plain text.
 * The stores' offsets and the layout come from the debug vmlinux through
 * tests/data/kernel-facts-$ABI.txt; each store is checked to be an
 * immediate store into the work before anything is written, and every
 * CPU's rcu_data to hold its CPU number: a mismatch refuses with a WARN,
 * which every guest test's log scan reports.
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/mutex.h>
#include "layout.h"   /* RCU_DATA*, REINIT_OFFSETS */

static const unsigned int reinit_at[] = { REINIT_OFFSETS };

static unsigned long (*lookup)(const char *name);
static void (*poke_bp)(void *addr, const void *opcode, size_t len, const void *emulate);
static struct mutex *p_text_mutex;
static unsigned long handler;

static char *rdp_of(int cpu)
{
	return (char *)per_cpu_ptr((void __percpu *)RCU_DATA, cpu);
}

/* kallsyms_lookup_name is not exported: a kprobe resolves it. */
static int resolve(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

	if (register_kprobe(&kp))
		return -ENOENT;
	lookup = (void *)kp.addr;
	unregister_kprobe(&kp);
	poke_bp = (void *)lookup("text_poke_bp");
	p_text_mutex = (void *)lookup("text_mutex");
	return poke_bp && p_text_mutex ? 0 : -ENOENT;
}

/* The length of `mov{l,q} $imm32, disp8(%reg)` into the work at `p`, or 0. */
static unsigned int store_into_work(const u8 *p)
{
	unsigned int rex = p[0] == 0x48;
	const u8 *q = p + rex;
	int disp = (s8)q[2];

	if (q[0] != 0xc7 || (q[1] & 0xf8) != 0x40 || (q[1] & 7) == 4)
		return 0;   /* not C7 /0 with a disp8 and no SIB */
	if (disp < RCU_DATA_DEFER_QS_IW || disp >= RCU_DATA_DEFER_QS_IW + (int)sizeof(struct irq_work))
		return 0;
	return rex + 7;
}

static void init_work_here(void *unused)
{
	struct irq_work *w = (struct irq_work *)(rdp_of(smp_processor_id()) + RCU_DATA_DEFER_QS_IW);

	if (irq_work_is_pending(w))
		return;   /* queued after an initialisation: leave it */
	*w = IRQ_WORK_INIT_HARD((void (*)(struct irq_work *))handler);
}

static int __init fix_init(void)
{
	/* text_poke_bp writes one instruction of at most 5 bytes (a NOP only
	 * of 2 or 5): the store's first two bytes become `jmp` over the rest. */
	static const u8 skip5[] = { 0xeb, 0x05 }, skip6[] = { 0xeb, 0x06 };
	unsigned int len[ARRAY_SIZE(reinit_at)];
	unsigned long fn;
	unsigned int i;
	int cpu;

	if (resolve()) {
		WARN(1, "kjit lab fix rcu_defer_qs: kallsyms, text_poke_bp or text_mutex not found\n");
		return -ENOENT;
	}
	fn = lookup("rcu_read_unlock_special");
	for_each_possible_cpu(cpu)
		if (WARN(*(int *)(rdp_of(cpu) + RCU_DATA_CPU) != cpu,
			 "kjit lab fix rcu_defer_qs: rcu_data layout of CPU %d does not match the kernel facts\n", cpu))
			return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(reinit_at); i++) {
		const u8 *p = (const u8 *)fn + reinit_at[i];

		len[i] = fn ? store_into_work(p) : 0;
		if (WARN(len[i] != 7 && len[i] != 8,
			 "kjit lab fix rcu_defer_qs: rcu_read_unlock_special+%u is not a store into defer_qs_iw\n",
			 reinit_at[i]))
			return -EINVAL;
		/* the handler is the one 64-bit immediate store's sign-extended imm32 */
		if (p[0] == 0x48 && (s8)p[3] == RCU_DATA_DEFER_QS_IW + (int)offsetof(struct irq_work, func))
			handler = (unsigned long)(long)*(const s32 *)(p + 4);
	}
	if (WARN(!handler, "kjit lab fix rcu_defer_qs: no store of the handler found\n"))
		return -EINVAL;
	on_each_cpu(init_work_here, NULL, 1);
	mutex_lock(p_text_mutex);
	for (i = 0; i < ARRAY_SIZE(reinit_at); i++)
		poke_bp((void *)(fn + reinit_at[i]), len[i] == 7 ? skip5 : skip6, 2, NULL);
	mutex_unlock(p_text_mutex);
	for (i = 0; i < ARRAY_SIZE(reinit_at); i++)
		WARN(memcmp((void *)(fn + reinit_at[i]), len[i] == 7 ? skip5 : skip6, 2),
		     "kjit lab fix rcu_defer_qs: rcu_read_unlock_special+%u was not patched\n", reinit_at[i]);
	pr_info("kjit lab fix rcu_defer_qs: rcu_read_unlock_special no longer re-initialises RCU's deferred-QS irq_work (%zu stores replaced)\n",
		ARRAY_SIZE(reinit_at));
	return 0;
}

module_init(fix_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit lab: Debian 6.1's deferred-QS irq_work re-initialisation hang fixed as upstream 61399e0c5410 does");
