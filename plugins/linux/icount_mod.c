// SPDX-License-Identifier: GPL-2.0
/* The icount tool as a kjit plugin module: count the instructions
 * executed by the instrumented entry points (e.g. clone).  kjit.ko exports
 * the plugin API; this module registers its plugin at load and unregisters
 * it at unload (the engine flushes, so no translated code refers to this
 * module afterwards).  The count is in /sys/module/kjit_icount/
 * parameters/count and in the kernel log at unload.  The counter is per-CPU
 * (kjit_alloc_percpu), so the figure stays exact while CPUs run the same
 * code at once; it is read as the sum over the CPUs. */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "kjit/plugin.h"

static uint64_t *count;

static void ins_count(uint64_t *c) { (*c)++; }

static void on_insn(struct kjit_insn *insn, void *arg)
{
	kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)ins_count, 1, KJIT_ARG_PTR(count));
}

static const struct kjit_plugin icount_plugin = {
	.name = "icount_module",
	.on_insn = on_insn,
};

static int count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", (unsigned long long)kjit_percpu_sum_u64(count));
}
static int count_set(const char *val, struct kernel_param *kp) { return -EPERM; }
static const struct kernel_param_ops count_ops = { .get = count_get, .set = (void *)count_set };
module_param_cb(count, &count_ops, NULL, 0444);

static int __init icount_init(void)
{
	count = kjit_alloc_percpu(sizeof(*count));
	if (!count)
		count = kjit_alloc(sizeof(*count));   /* no per-CPU window: shared */
	if (!count)
		return -ENOMEM;
	return kjit_register_plugin(&icount_plugin);
}

static void __exit icount_exit(void)
{
	kjit_unregister_plugin(&icount_plugin);
	pr_info("kjit_icount: %llu instructions\n", (unsigned long long)kjit_percpu_sum_u64(count));
}

module_init(icount_init);
module_exit(icount_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit plugin: instruction count");
