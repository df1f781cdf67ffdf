// SPDX-License-Identifier: GPL-2.0
/* plugins/branch_hints.c (the branch_hints tool, the same source the
 * simulator and kjit.ko use) as an external plugin module.  Results in
 * /sys/module/kjit_branch_hints/parameters/result:
 * "executed taken predicted_right predicted_wrong hinted hint_right". */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "kjit_examples.h"

static int result_get(char *buf, const struct kernel_param *kp)
{
	const struct kjit_branch_stats *s = kjit_branch_hints_result();

	if (!s)
		return sysfs_emit(buf, "0 0 0 0 0 0\n");
	return sysfs_emit(buf, "%llu %llu %llu %llu %llu %llu\n", s->executed, s->taken,
			  s->predicted_right, s->predicted_wrong, s->hinted, s->hint_right);
}
static const struct kernel_param_ops result_ops = { .get = result_get };
module_param_cb(result, &result_ops, NULL, 0444);

static int __init bh_init(void)
{
	int ret = kjit_branch_hints_init();

	if (ret)
		return ret;
	return kjit_register_plugin(kjit_example_branch_hints());
}

static void __exit bh_exit(void)
{
	kjit_unregister_plugin(kjit_example_branch_hints());
}

module_init(bh_init);
module_exit(bh_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit plugin: branch-hint accuracy (plugins/branch_hints.c)");
