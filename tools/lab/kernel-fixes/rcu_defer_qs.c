// SPDX-License-Identifier: GPL-2.0
/*
 * Lab-only workaround for a hang in Debian's 6.1 kernels (6.1.192), loaded by
 * the lab's /init on kernels that can reach it on their own (RCU boosting;
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
 * once ("rcu: Fix racy re-initialization of irq_work causing hangs").
 *
 * Here an ftrace handler at rcu_read_unlock_special()'s entry marks the state
 * DEFER_QS_PENDING while the work is still queued, so the function neither
 * re-initialises nor re-queues it; the queued work runs as it would have.
 * The layout (the per-CPU offset of rcu_data, its fields) comes from the
 * debug vmlinux through tests/data/kernel-facts-$ABI.txt and is checked
 * against every CPU's rcu_data at load: a mismatch refuses with a WARN, which
 * every guest test's log scan reports.
 */
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>
#include "layout.h"   /* RCU_DATA, RCU_DATA_CPU, RCU_DATA_DEFER_QS_IW, RCU_DATA_DEFER_QS_PENDING */

#define DEFER_QS_IDLE 0
#define DEFER_QS_PENDING 1

/* Entries that found the work queued with the state back at DEFER_QS_IDLE,
 * where the function re-initialises it if interrupts are off and an
 * expedited grace period or boosting is in play. */
static atomic_t caught = ATOMIC_INIT(0);

static int caught_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&caught));
}
static const struct kernel_param_ops caught_ops = { .get = caught_get };
module_param_cb(caught, &caught_ops, NULL, 0444);
MODULE_PARM_DESC(caught, "entries that would have re-initialised a queued deferred-QS irq_work");

static char *rdp_of(int cpu)
{
	return (char *)per_cpu_ptr((void __percpu *)RCU_DATA, cpu);
}

static void notrace mark_queued_work(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	unsigned long flags;
	char *rdp;

	/* Interrupts off: the CPU, and its work's queued state, stay put. */
	raw_local_irq_save(flags);
	rdp = rdp_of(raw_smp_processor_id());
	if (irq_work_is_pending((struct irq_work *)(rdp + RCU_DATA_DEFER_QS_IW)) &&
	    READ_ONCE(*(int *)(rdp + RCU_DATA_DEFER_QS_PENDING)) != DEFER_QS_PENDING) {
		WRITE_ONCE(*(int *)(rdp + RCU_DATA_DEFER_QS_PENDING), DEFER_QS_PENDING);
		atomic_inc(&caught);
	}
	raw_local_irq_restore(flags);
}

static struct ftrace_ops mark_ops = {
	.func = mark_queued_work,
};

static int __init fix_init(void)
{
	static char name[] = "rcu_read_unlock_special";
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		char *rdp = rdp_of(cpu);
		int pending = READ_ONCE(*(int *)(rdp + RCU_DATA_DEFER_QS_PENDING));

		if (WARN(*(int *)(rdp + RCU_DATA_CPU) != cpu ||
			 (pending != DEFER_QS_IDLE && pending != DEFER_QS_PENDING),
			 "kjit lab fix rcu_defer_qs: rcu_data layout of CPU %d does not match the kernel facts\n", cpu))
			return -EINVAL;
	}
	ret = ftrace_set_filter(&mark_ops, name, sizeof(name) - 1, 0);
	if (!ret)
		ret = register_ftrace_function(&mark_ops);
	if (ret) {
		WARN(1, "kjit lab fix rcu_defer_qs: cannot trace %s: %d\n", name, ret);
		return ret;
	}
	pr_info("kjit lab fix rcu_defer_qs: a queued deferred-QS irq_work is never re-initialised\n");
	return 0;
}

static void __exit fix_exit(void)
{
	unregister_ftrace_function(&mark_ops);
}

module_init(fix_init);
module_exit(fix_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit lab: workaround for the deferred-QS irq_work re-initialisation hang of Debian 6.1 kernels");
