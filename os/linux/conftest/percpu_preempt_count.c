// SPDX-License-Identifier: GPL-2.0
/* preempt_count is the per-CPU variable __preempt_count. */
#include <linux/percpu.h>
#include <linux/preempt.h>
int kjit_conftest_preempt_count(void);
int kjit_conftest_preempt_count(void)
{
	return raw_cpu_read_4(__preempt_count);
}
