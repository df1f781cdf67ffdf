// SPDX-License-Identifier: GPL-2.0
/* Test module for the guest suite: a livepatch replacing cmdline_proc_show
 * (what /proc/cmdline prints) with a function printing "kjit-livepatch".
 * The suite attaches kjit to cmdline_proc_show before and after loading it:
 * livepatch's IPMODIFY ftrace_ops and kjit's direct ops share the function
 * (ftrace's ops_func), and the patch takes effect either way. */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/seq_file.h>

static int kjit_livepatch_cmdline_show(struct seq_file *m, void *v)
{
	seq_puts(m, "kjit-livepatch\n");
	return 0;
}

static struct klp_func funcs[] = {
	{ .old_name = "cmdline_proc_show", .new_func = kjit_livepatch_cmdline_show },
	{ }
};

static struct klp_object objs[] = {
	{ .funcs = funcs },   /* no name: vmlinux */
	{ }
};

static struct klp_patch patch = {
	.mod = THIS_MODULE,
	.objs = objs,
};

static int __init kjit_livepatch_init(void)
{
	return klp_enable_patch(&patch);
}

static void __exit kjit_livepatch_exit(void)
{
}

module_init(kjit_livepatch_init);
module_exit(kjit_livepatch_exit);
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
