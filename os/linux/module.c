// SPDX-License-Identifier: GPL-2.0
/* kjit.ko: init and exit.  Order: symbols, shim ranges, memory (+selftest),
 * dynamic extable, engine + built-in tool, entry redirection, control device;
 * exit in reverse, and nothing is freed before every task has left the code
 * cache. */
#include <linux/kernel.h>
#include <linux/module.h>
#include "kjit_linux.h"
#include "kjit/engine.h"

static struct kjit_os_memory kjit_mem;

static int __init kjit_init(void)
{
	int ret;

	ret = kjit_kallsyms_init();
	if (ret)
		return ret;
	ret = kjit_shim_init();
	if (ret)
		return ret;
	ret = kjit_quiesce_init();
	if (ret)
		return ret;
	ret = kjit_mem_init(&kjit_mem);
	if (ret)
		return ret;
	ret = kjit_mem_selftest();
	if (ret)
		goto err_mem;
	ret = kjit_extable_init();
	if (ret)
		goto err_mem;
	ret = kjit_entry_init();
	if (ret)
		goto err_ext;
	ret = kjit_tools_init(&kjit_mem);
	if (ret)
		goto err_entry;
	ret = kjit_textwatch_init();
	if (ret)
		goto err_tools;
	ret = kjit_control_init();
	if (ret)
		goto err_text;
	pr_info("kjit: loaded (tool %s)\n", kjit_tool_name(kjit_tool.id));
	return 0;

err_text:
	kjit_textwatch_exit();
err_tools:
	kjit_tools_exit();
err_entry:
	kjit_entry_exit();
err_ext:
	kjit_extable_exit();
err_mem:
	kjit_mem_exit();
	return ret;
}

static void __exit kjit_exit(void)
{
	kjit_control_exit();
	kjit_textwatch_exit();
	kjit_entry_exit();       /* detach all, wait for tasks in the cache */
	kjit_tools_exit();
	kjit_extable_exit();
	kjit_mem_exit();
	pr_info("kjit: unloaded\n");
}

module_init(kjit_init);
module_exit(kjit_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit: JIT instrumentation for the running kernel");
