/* SPDX-License-Identifier: GPL-2.0 */
/* kcov.c: the KCOV ABI (Documentation/dev-tools/kcov.rst) on kernels built
 * without CONFIG_KCOV: a debugfs file `kcov`, and the built-in tool that
 * fills the buffers from translated code.  A plugin of the engine (below the
 * engine host, above nothing but the kernel). */
#ifndef KJIT_KCOV_H
#define KJIT_KCOV_H

#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include "entry_table.h"

struct kjit_plugin;
struct task_struct;

/* Creates /sys/kernel/debug/kcov unless the kernel has its own; 0 or
 * -EEXIST (a real KCOV: kjit's stays away). */
int kjit_kcov_device_create(void);
void kjit_kcov_device_remove(void);
int kjit_kcov_init(void);     /* the task-exit probe */
/* Whether addr is one of the kcov file's operations. */
bool kjit_kcov_is_device_op(unsigned long addr);
void kjit_kcov_exit(void);
/* The kcov tool's entry filter: current has coverage enabled and runs in
 * task context.  kcov.c keeps the tool's bit of entry_table.h's per-CPU
 * admitted byte for
 * the task on each CPU, which entry_trampoline.S reads too. */
static inline bool kjit_kcov_current_admitted(void)
{
	return in_task() && (this_cpu_read(kjit_entry_task_admitted) & KJIT_ENTRY_ADMIT_TOOL);
}
const struct kjit_plugin *kjit_kcov_plugin(void);
/* Tasks with coverage enabled right now (the tool's scalar). */
u64 kjit_kcov_enabled_tasks(void);

#endif
