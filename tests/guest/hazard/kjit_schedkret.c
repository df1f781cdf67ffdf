// SPDX-License-Identifier: GPL-2.0
/* Test module for tests/guest/neighbours.sh: a kretprobe on __schedule,
 * the funnel kjit's scheduler gate follows sleeps through.  __schedule is
 * notrace, so no ftrace user and no kprobe_events line can hook it; a
 * module's kprobe can.  Counts the entries and returns of tasks named
 * `comm` (parameter), read from /sys/module/kjit_schedkret/parameters/:
 * `counts` prints "ENTRIES RETURNS MISSED"; writing anything resets them. */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/string.h>

static char comm[TASK_COMM_LEN] = "neighbour_calls";
module_param_string(comm, comm, sizeof(comm), 0644);

static atomic_long_t entries, returns;

static int entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (strncmp(current->comm, comm, TASK_COMM_LEN))
		return 1;   /* no return handler for other tasks */
	atomic_long_inc(&entries);
	return 0;
}

static int ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&returns);
	return 0;
}

static struct kretprobe krp = {
	.kp.symbol_name = "__schedule",
	.entry_handler = entry,
	.handler = ret,
	.maxactive = 256,
};

static int counts_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld %ld %d\n", atomic_long_read(&entries), atomic_long_read(&returns),
			  krp.nmissed);
}

static int counts_set(const char *val, const struct kernel_param *kp)
{
	atomic_long_set(&entries, 0);
	atomic_long_set(&returns, 0);
	krp.nmissed = 0;
	return 0;
}

static const struct kernel_param_ops counts_ops = { .get = counts_get, .set = counts_set };
module_param_cb(counts, &counts_ops, NULL, 0644);

static int __init kjit_schedkret_init(void)
{
	return register_kretprobe(&krp);
}

static void __exit kjit_schedkret_exit(void)
{
	unregister_kretprobe(&krp);
}

module_init(kjit_schedkret_init);
module_exit(kjit_schedkret_exit);
MODULE_LICENSE("GPL");
