// SPDX-License-Identifier: GPL-2.0
/* The built-in instruction-count tool (the JIFL paper's Figure 3): one
 * counter in the data window, `(*c)++` before every translated instruction.
 * Racy across CPUs by design (a plain add, like the paper's); it counts. */
#include <linux/kernel.h>
#include <linux/module.h>
#include "kjit_linux.h"
#include "kjit/plugin.h"

static bool icount = true;
module_param(icount, bool, 0444);
MODULE_PARM_DESC(icount, "register the built-in instruction-count tool at load");

static u64 *kjit_icount_ctr;
static bool kjit_icount_registered;

static void kjit_icount_inc(u64 *c)
{
	(*c)++;
}

static void kjit_icount_on_insn(struct kjit_insn *insn, void *arg)
{
	kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)kjit_icount_inc, 1,
			 KJIT_ARG_PTR(kjit_icount_ctr));
}

static const struct kjit_plugin kjit_icount_plugin = {
	.name = "icount",
	.on_insn = kjit_icount_on_insn,
};

int kjit_icount_init(void)
{
	int ret;

	if (!icount)
		return 0;
	kjit_icount_ctr = kjit_alloc(sizeof(u64));
	if (!kjit_icount_ctr)
		return -ENOMEM;
	ret = kjit_register_plugin(&kjit_icount_plugin);
	if (ret)
		return ret;
	kjit_icount_registered = true;
	return 0;
}

void kjit_icount_exit(void)
{
	if (kjit_icount_registered)
		kjit_unregister_plugin(&kjit_icount_plugin);
	kjit_icount_registered = false;
}

u64 kjit_icount_read(void)
{
	return kjit_icount_ctr ? READ_ONCE(*kjit_icount_ctr) : 0;
}

void kjit_icount_reset(void)
{
	if (kjit_icount_ctr)
		WRITE_ONCE(*kjit_icount_ctr, 0);
}
