// SPDX-License-Identifier: GPL-2.0
/* kjit.ko: init and exit.  Order: symbols, shim ranges, memory (+selftest),
 * engine, built-in tool, entry redirection, control device; exit in reverse,
 * and nothing is freed before every task has left the code cache. */
#include <linux/kernel.h>
#include <linux/module.h>
#include "kjit_linux.h"
#include "kjit/engine.h"

static struct kjit_os_memory kjit_mem;
static struct kjit_os_kernel_facts kjit_facts;

static int __init kjit_init(void)
{
	struct kjit_engine_options opt;
	int ret;

	ret = kjit_kallsyms_init();
	if (ret)
		return ret;
	ret = kjit_shim_init();
	if (ret)
		return ret;
	ret = kjit_mem_init(&kjit_mem);
	if (ret)
		return ret;
	ret = kjit_mem_selftest();
	if (ret)
		goto err_mem;
	kjit_shim_fill_facts(&kjit_facts);
	if (!kjit_facts.return_thunk || !kjit_facts.fentry || !kjit_facts.schedule_funnel) {
		pr_err("kjit: kernel facts incomplete\n");
		ret = -ENOENT;
		goto err_mem;
	}
	kjit_engine_default_options(&opt);
	ret = kjit_engine_init(&kjit_mem, &kjit_facts, &opt);
	if (ret) {
		pr_err("kjit: engine init failed: %d\n", ret);
		goto err_mem;
	}
	ret = kjit_icount_init();
	if (ret) {
		pr_err("kjit: icount tool failed: %d\n", ret);
		goto err_engine;
	}
	ret = kjit_entry_init();
	if (ret)
		goto err_icount;
	ret = kjit_control_init();
	if (ret)
		goto err_entry;
	pr_info("kjit: loaded (return thunk %px, __schedule %px)\n",
		(void *)(unsigned long)kjit_facts.return_thunk,
		(void *)(unsigned long)kjit_facts.schedule_funnel);
	return 0;

err_entry:
	kjit_entry_exit();
err_icount:
	kjit_icount_exit();
err_engine:
	kjit_engine_fini();
err_mem:
	kjit_mem_exit();
	return ret;
}

static void __exit kjit_exit(void)
{
	kjit_control_exit();
	kjit_entry_exit();       /* detach all, wait for tasks in the cache */
	kjit_icount_exit();
	kjit_engine_fini();
	kjit_mem_exit();
	pr_info("kjit: unloaded\n");
}

module_init(kjit_init);
module_exit(kjit_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit: JIT instrumentation for the running kernel");
