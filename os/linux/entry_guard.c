// SPDX-License-Identifier: GPL-2.0
/* The per-CPU guard against entering kjit from inside kjit (entry_guard.h). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include "entry_guard.h"

DEFINE_PER_CPU(u8, kjit_guard);
static DEFINE_PER_CPU(u64, nested);

void kjit_guard_count_nested(void)
{
	this_cpu_inc(nested);
}

u64 kjit_guard_nested(void)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(&nested, cpu));
	return n;
}
