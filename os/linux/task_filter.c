// SPDX-License-Identifier: GPL-2.0
/* The entry policy's filter by task: `kjitctl record --tid/--comm/--cgroup
 * /--cpu`.  A task is admitted when every filter that is set matches it;
 * the answer is computed when the task is switched in (sched_switch, on the
 * CPU it is about to run on, interrupts off) and kept as the policy's bit
 * of this CPU's admitted byte (entry_table.h), which the trampoline and the
 * C path read on every entry: the cost of the filter is paid once per
 * switch, not per entry.  A task migrated to another CPU is switched in
 * there, so the bit is always its own while it runs.
 *
 * What can change while a task runs is re-evaluated at its next switch-in:
 * its comm (exec, prctl PR_SET_NAME) and its cgroup (a write to
 * cgroup.procs moves a running task without switching it).  A task that
 * never sleeps is still preempted at its time slice's end.
 *
 * The probe reads only what is safe under RCU with the runqueue lock held:
 * the pid, the comm bytes (a racing rename reads as either name, or a mix
 * that matches neither), and task_dfl_cgroup() under rcu_read_lock (the
 * css_set is RCU-freed); cgroup_is_descendant() compares ancestor
 * pointers of a cgroup the filter holds a reference on.
 *
 * The filter is changed only with the probe unregistered and its last
 * call finished (tracepoint_synchronize_unregister), so the probe reads
 * it without a lock. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/bitmap.h>
#include <linux/cgroup.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "task_filter.h"
#include "entry_table.h"

static struct {
	bool on;
	u32 tid;                          /* 0: any */
	char comm[TASK_COMM_LEN];         /* "": any */
	struct cgroup *cgroup;            /* NULL: any; a reference */
	bool by_cpu;
	DECLARE_BITMAP(cpus, KJIT_CONFIG_CPUS_MAX);
} filter;

static struct tracepoint *tp_switch;
static bool probe_registered;

static bool task_admitted(struct task_struct *t, int cpu)
{
	bool in;

	if (filter.tid && t->pid != filter.tid)
		return false;
	if (filter.comm[0] && strncmp(t->comm, filter.comm, TASK_COMM_LEN))
		return false;
	if (filter.by_cpu && (cpu >= KJIT_CONFIG_CPUS_MAX || !test_bit(cpu, filter.cpus)))
		return false;
	if (!filter.cgroup)
		return true;
	rcu_read_lock();
	in = cgroup_is_descendant(task_dfl_cgroup(t), filter.cgroup);
	rcu_read_unlock();
	return in;
}

/* This CPU's bit for t, which runs here next (or now); interrupts off. */
static void cpu_set(struct task_struct *t)
{
	if (task_admitted(t, smp_processor_id()))
		this_cpu_or(kjit_entry_task_admitted, KJIT_ENTRY_ADMIT_POLICY);
	else
		this_cpu_and(kjit_entry_task_admitted, (u8)~KJIT_ENTRY_ADMIT_POLICY);
}

static void switch_probe(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	cpu_set(next);
}

/* From an IPI: the task this CPU was running. */
static void cpu_set_current(void *unused)
{
	cpu_set(current);
}

static void cpu_clear(void *unused)
{
	this_cpu_and(kjit_entry_task_admitted, (u8)~KJIT_ENTRY_ADMIT_POLICY);
}

static void find_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
}

void kjit_task_filter_clear(void)
{
	if (probe_registered) {
		tracepoint_probe_unregister(tp_switch, switch_probe, NULL);
		tracepoint_synchronize_unregister();
		probe_registered = false;
	}
	if (filter.on)
		on_each_cpu(cpu_clear, NULL, 1);
	if (filter.cgroup)
		cgroup_put(filter.cgroup);
	memset(&filter, 0, sizeof(filter));
}

int kjit_task_filter_set(const struct kjit_ioc_config *c)
{
	int i, ret;

	kjit_task_filter_clear();
	if (!c->tid && !c->comm[0] && !(c->flags & (KJIT_CONFIG_CGROUP | KJIT_CONFIG_CPUS)))
		return 0;
	if (c->flags & KJIT_CONFIG_CGROUP) {
		struct cgroup *cg = cgroup_get_from_fd(c->cgroup_fd);

		if (IS_ERR(cg))
			return PTR_ERR(cg);
		filter.cgroup = cg;
	}
	filter.tid = c->tid;
	memcpy(filter.comm, c->comm, min(sizeof(filter.comm), sizeof(c->comm)));
	filter.comm[TASK_COMM_LEN - 1] = 0;
	if (c->flags & KJIT_CONFIG_CPUS) {
		filter.by_cpu = true;
		for (i = 0; i < KJIT_CONFIG_CPUS_MAX; i++)
			if (c->cpus[i / 64] & (1ull << (i % 64)))
				__set_bit(i, filter.cpus);
	}
	filter.on = true;
	if (!tp_switch)
		for_each_kernel_tracepoint(find_switch, NULL);
	ret = tp_switch ? tracepoint_probe_register(tp_switch, switch_probe, NULL) : -ENOENT;
	if (ret) {
		pr_err("no sched_switch probe (%d): no filter by task\n", ret);
		kjit_task_filter_clear();
		return ret;
	}
	probe_registered = true;
	/* the tasks running now are switched in already */
	on_each_cpu(cpu_set_current, NULL, 1);
	return 0;
}

u8 kjit_task_filter_bits(void)
{
	return filter.on ? KJIT_ENTRY_ADMIT_POLICY : 0;
}
