// SPDX-License-Identifier: GPL-2.0
/* Test module for the guest suite: another ftrace direct-call user on one
 * function (addr=, the suite passes cmdline_proc_show's), as a BPF
 * trampoline is, with an ops_func that lets an IPMODIFY ops share the
 * function, as BPF's does.  kjit's direct ops is then refused the function
 * and kjit attaches it through its IPMODIFY ops: ftrace calls kjit's
 * handler, which points the ip at the translation, then this trampoline,
 * which returns there.  parameters/calls counts this trampoline's calls. */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/ftrace.h>
#include <asm/ibt.h>
#include <asm/linkage.h>
#include "compat.h"   /* os/linux/compat.h: the direct-call API of these headers */

static unsigned long addr;
module_param(addr, ulong, 0444);
MODULE_PARM_DESC(addr, "the function to attach to");

unsigned long kjit_peer_calls;
module_param_named(calls, kjit_peer_calls, ulong, 0444);

extern void kjit_peer_tramp(void);

/* Called from the function's fentry site with [rsp] = where it goes on
 * (the function + 5, or what an IPMODIFY handler chose).  Flags are dead at
 * a function's entry. */
asm(
"	.pushsection	.text, \"ax\", @progbits\n"
"	.type		kjit_peer_tramp, @function\n"
"	.globl		kjit_peer_tramp\n"
"kjit_peer_tramp:"
	ASM_ENDBR
"	lock incq	kjit_peer_calls(%rip)\n"
	ASM_RET
"	.size		kjit_peer_tramp, .-kjit_peer_tramp\n"
"	.popsection\n"
);

static int share_with_ipmodify(struct ftrace_ops *ops, enum ftrace_ops_cmd cmd)
{
	return 0;
}

static struct ftrace_ops ops = { .ops_func = share_with_ipmodify };

static int __init kjit_direct_peer_init(void)
{
	int ret;

	if (!addr)
		return -EINVAL;
	ret = ftrace_set_filter_ip(&ops, addr, 0, 0);
	if (!ret)
		ret = kjit_register_ftrace_direct(&ops, (unsigned long)kjit_peer_tramp);
	if (ret)
		ftrace_free_filter(&ops);
	return ret;
}

static void __exit kjit_direct_peer_exit(void)
{
	kjit_unregister_ftrace_direct(&ops, (unsigned long)kjit_peer_tramp);
	ftrace_free_filter(&ops);
}

module_init(kjit_direct_peer_init);
module_exit(kjit_direct_peer_exit);
MODULE_LICENSE("GPL");
