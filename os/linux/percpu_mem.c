// SPDX-License-Identifier: GPL-2.0
/* The per-CPU data window: one __alloc_percpu() block, allocated once at
 * module load and kept until unload (engine re-creation reuses it; the
 * engine zeroes what it hands out).
 *
 * Translated code reaches it as this_cpu_add does: gs base + the __percpu
 * pointer value.  One allocation is at most PCPU_MIN_UNIT_SIZE (32 KiB),
 * so the window is one block of up to that size.  Allocating it at load,
 * not per plugin, keeps the chance that it comes from the first chunk
 * (whose __percpu pointers are small: gs:[disp32], no register); a block
 * from a later chunk has a pointer far outside a disp32, and the engine
 * then loads it into a register the liveness analysis says is dead (or
 * saves one).  Both are correct; the load message says which one this
 * kernel got.  percpu_self is &this_cpu_off: each CPU's own per-CPU base,
 * what this_cpu_ptr() adds, for routines the engine calls instead of
 * inlining. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include "percpu_mem.h"

static unsigned int percpu_kb = 16;
module_param(percpu_kb, uint, 0444);
MODULE_PARM_DESC(percpu_kb, "per-CPU data window in KiB per CPU (max 32; 0: none)");

static void __percpu *window;
static u8 **views;

void kjit_percpu_mem_init(struct kjit_os_memory *mem)
{
	unsigned long size = min_t(unsigned long, (unsigned long)percpu_kb << 10, PCPU_MIN_UNIT_SIZE);
	unsigned long ptr;
	int cpu;

	if (!size)
		return;
	views = kcalloc(nr_cpu_ids, sizeof(*views), GFP_KERNEL);
	window = __alloc_percpu(size, SMP_CACHE_BYTES);
	if (!views || !window) {
		pr_warn("no per-CPU data window (%lu bytes): counters are shared\n", size);
		kjit_percpu_mem_exit();
		return;
	}
	for_each_possible_cpu(cpu)
		views[cpu] = per_cpu_ptr((u8 __percpu *)window, cpu);
	ptr = (unsigned long)window;
	mem->percpu_offset = ptr;
	mem->percpu_size = size;
	mem->percpu_self = (unsigned long)&this_cpu_off;
	mem->percpu_host_views = views;
	mem->percpu_ncpus = nr_cpu_ids;
	pr_info("per-CPU window %lu bytes at gs:%#lx (%s)\n", size, ptr,
		(long)ptr == (long)(s32)ptr ? "disp32" : "beyond disp32: via a register");
}

void kjit_percpu_mem_exit(void)
{
	free_percpu(window);
	window = NULL;
	kfree(views);
	views = NULL;
}
