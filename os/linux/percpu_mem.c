// SPDX-License-Identifier: GPL-2.0
/* The per-CPU data window, for the engine's lifetime in this module (engine
 * re-creation reuses it; the engine zeroes what it hands out).
 *
 * Translated code reaches it as this_cpu_add does: gs base + the window's
 * __percpu pointer.  Whether that pointer fits a sign-extended disp32
 * decides the instruction: `add qword gs:[disp32], imm` when it does, else
 * `mov reg, imm64; add qword gs:[reg], imm` (one more instruction, and the
 * register saved where it is live).  Measured on 6.1.0-56-cloud-amd64 at
 * module load: every __alloc_percpu() block, even 64 bytes, comes from a
 * later chunk (0xc0ffffc12005c0: the first chunk's dynamic area is used up
 * by then), while a module's static per-CPU data is placed in the first
 * chunk's module reserve (0x34000, PERCPU_MODULE_RESERVE = 8 KiB shared by
 * every module).  So the default window is static: PERCPU_STATIC_BYTES of
 * this module's own per-CPU data, disp32-addressable, small enough to leave
 * most of the reserve to other modules.  A tool that needs more sets
 * percpu_kb: one __alloc_percpu() block of up to PCPU_MIN_UNIT_SIZE
 * (32 KiB, its limit), reached through a register.
 *
 * percpu_self is &this_cpu_off: each CPU's own per-CPU base, what
 * this_cpu_ptr() adds, for routines the engine calls instead of inlining. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include "percpu_mem.h"

#define PERCPU_STATIC_BYTES 1024

static unsigned int percpu_kb;
module_param(percpu_kb, uint, 0444);
MODULE_PARM_DESC(percpu_kb, "per-CPU data window in KiB per CPU, max 32 (0: 1 KiB of static per-CPU data, reached with gs:disp32)");

static DEFINE_PER_CPU_ALIGNED(u8, static_window[PERCPU_STATIC_BYTES]);
static void __percpu *dynamic_window;
static u8 **views;

void kjit_percpu_mem_init(struct kjit_os_memory *mem)
{
	unsigned long size = min_t(unsigned long, (unsigned long)percpu_kb << 10, PCPU_MIN_UNIT_SIZE);
	void __percpu *window = &static_window;
	unsigned long ptr;
	int cpu;

	views = kcalloc(nr_cpu_ids, sizeof(*views), GFP_KERNEL);
	if (!views) {
		pr_warn("no per-CPU data window: counters are shared\n");
		return;
	}
	if (size) {
		dynamic_window = __alloc_percpu(size, SMP_CACHE_BYTES);
		if (dynamic_window)
			window = dynamic_window;
		else
			pr_warn("per-CPU window of %lu bytes refused, using the static one\n", size);
	}
	if (!dynamic_window)
		size = PERCPU_STATIC_BYTES;
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
	free_percpu(dynamic_window);
	dynamic_window = NULL;
	kfree(views);
	views = NULL;
}
