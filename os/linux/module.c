// SPDX-License-Identifier: GPL-2.0
/* kjit.ko: init and exit, in layer order (os/linux/README.md).  Init:
 * symbols, shim ranges, quiesce, memory (+selftest, per-CPU window), dynamic extable,
 * entry redirection, BPF's hand-over hook, sleep following, engine host + configuration (engine and built-in
 * tool), text watch, control device.  Exit in reverse, and nothing is freed
 * before every task has left the code cache. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include "builtin_tools.h"
#include "cache_mem.h"
#include "capture/capture.h"
#include "config.h"
#include "kcov.h"
#include "control.h"
#include "dispatch_gates.h"
#include "direct_yield.h"
#include "engine_host.h"
#include "entry_attach.h"
#include "entry_trampoline.h"
#include "percpu_mem.h"
#include "extable.h"
#include "quiesce.h"
#include "sched_resume.h"
#include "shim.h"
#include "symbols.h"
#include "ksym_call.h"
#include "fentry.h"
#include "textwatch.h"
#include "crash_report.h"
#include "kernel_quirks.h"
#include "kernel_probe.h"
#include "uapi/kjit/ioctl.h"

static struct kjit_os_memory kjit_mem;

static int __init kjit_init(void)
{
	int ret;

	ret = kjit_ksym_call_init();
	if (ret)
		return ret;
	ret = kjit_symbols_init();
	if (ret)
		goto err_stubs;
	ret = kjit_fentry_init();
	if (ret)
		goto err_stubs;
	ret = kjit_shim_init();
	if (ret)
		goto err_stubs;
	ret = kjit_kernel_probe();
	if (ret)
		goto err_stubs;
	ret = kjit_quiesce_init();
	if (ret)
		goto err_stubs;
	ret = kjit_mem_init(&kjit_mem);
	if (ret)
		goto err_stubs;
	ret = kjit_mem_selftest();
	if (ret)
		goto err_mem;
	kjit_percpu_mem_init(&kjit_mem);
	ret = kjit_extable_init();
	if (ret)
		goto err_mem;
	ret = kjit_entry_init(kjit_direct_tramp);
	if (ret)
		goto err_ext;
	ret = kjit_direct_yield_init();
	if (ret)
		goto err_entry;
	/* Without the scheduler hook, sleeps are counted, not followed. */
	kjit_sched_resume_init(kjit_sched_return);
	/* The engine leaves translated code through these gates. */
	ret = kjit_host_init(&kjit_mem, kjit_gate_direct, kjit_gate_indirect,
			     kjit_sched_resume_active() ? kjit_gate_sched : NULL);
	if (ret)
		goto err_sched;
	ret = kjit_kcov_init();
	if (ret)
		goto err_kcov;
	ret = kjit_config_init();
	if (ret)
		goto err_config;
	ret = kjit_textwatch_init();
	if (ret)
		goto err_config;
	ret = kjit_crash_report_init();
	if (ret)
		goto err_text;
	ret = kjit_control_init();
	if (ret)
		goto err_crash;
	kjit_kernel_quirks_report();
	pr_info("loaded (tool %s)\n", kjit_tool_name(kjit_config_tool()));
	return 0;

err_crash:
	kjit_crash_report_exit();
err_text:
	kjit_textwatch_exit();
err_config:
	kjit_config_exit();
	kjit_kcov_exit();
err_kcov:
	kjit_host_exit();
err_sched:
	kjit_sched_resume_exit();
	kjit_direct_yield_exit();
err_entry:
	kjit_entry_exit();
err_ext:
	kjit_extable_exit();
err_mem:
	kjit_percpu_mem_exit();
	kjit_mem_exit();
err_stubs:
	kjit_ksym_call_exit();
	return ret;
}

static void __exit kjit_exit(void)
{
	kjit_control_exit();
	kjit_capture_exit();
	kjit_crash_report_exit();
	kjit_textwatch_exit();
	kjit_sched_resume_exit();  /* no task returns through the stub after this */
	kjit_direct_yield_exit();  /* no task left in its wrapper */
	kjit_entry_exit();       /* detach all, wait for tasks in the cache */
	kjit_kcov_exit();        /* an open kcov file holds the module: none is */
	kjit_config_exit();
	kjit_host_exit();
	kjit_extable_exit();
	kjit_percpu_mem_exit();
	kjit_mem_exit();
	kjit_ksym_call_exit();
	pr_info("unloaded\n");
}

module_init(kjit_init);
module_exit(kjit_exit);
MODULE_LICENSE("GPL");
MODULE_VERSION(KJIT_VERSION);
MODULE_DESCRIPTION("kjit: JIT instrumentation for the running kernel");
