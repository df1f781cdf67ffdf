// SPDX-License-Identifier: GPL-2.0
/* Kernel bugs that kjit does not cause but can make likelier, named once at
 * load so that a hang they cause is not blamed on the code it interrupted.
 *
 * RCU's deferred-quiescent-state irq_work (rcu_data.defer_qs_iw): kernels
 * with upstream b41642c87716 but not its fix 61399e0c5410 ("rcu: Fix racy
 * re-initialization of irq_work causing hangs"), Debian's 6.1.192 among
 * them, re-initialise the work in rcu_read_unlock_special() each time they
 * queue it.  When that happens while it is still queued, its list node
 * links to itself and the CPU that runs the list calls the handler for ever
 * with interrupts off.  The path is taken by an RCU unlock with interrupts
 * off in a task that was preempted in its read section (on PREEMPT_RT,
 * with RCU_BOOST, often); the more time a workload spends in such sections
 * (kjit's heavier tools slow it down), the likelier.  The fixed kernel
 * initialises the work once, elsewhere: rcu_read_unlock_special() no
 * longer names the handler, which is what is checked here.  Kernels older
 * than b41642c87716 name it too but never re-initialise a queued work;
 * the warning says which kernels it is about rather than tell them apart. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include "kernel_quirks.h"
#include "symbols.h"
#include "kjit/engine.h"

static void report_rcu_defer_qs_reinit(void)
{
	int (*size_of)(unsigned long, unsigned long *, unsigned long *) =
		kjit_ksym_fn("kallsyms_lookup_size_offset");
	unsigned long fn = kjit_ksym("rcu_read_unlock_special");
	unsigned long handler = kjit_ksym("rcu_preempt_deferred_qs_handler");
	unsigned long size = 0, off = 0;

	if (!size_of || !fn || !handler || !size_of(fn, &size, &off) || off)
		return;
	if (kjit_engine_code_names_value(fn, size, handler))
		pr_warn("kernel bug: rcu_read_unlock_special() re-initialises RCU's deferred-QS irq_work each time it queues it, which with upstream b41642c87716 and without its fix 61399e0c5410 (Debian's 6.1.192) can happen while it is queued: a CPU then runs irq_work_run_list() for ever.  kjit's slower tools make that likelier on PREEMPT_RT; kjit starts no expedited grace period, the other way in\n");
}

void kjit_kernel_quirks_report(void)
{
	report_rcu_defer_qs_reinit();
}
