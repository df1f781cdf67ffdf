// SPDX-License-Identifier: GPL-2.0
/* Oopses in translated code name the original code.
 *
 * An oops whose RIP is in the code cache prints "RIP: kjit_cache_area+0x..."
 * and, since the cache has no unwind information, no useful frames after
 * it: nobody could tell which kernel function was running.  A die notifier
 * (DIE_OOPS: after the kernel printed its registers and trace, before it
 * decides to panic) adds the original function+offset of the faulting
 * instruction and of every code-cache address among the stack words above
 * the fault, the way the kernel's own trace lists "?" frames.  The engine's
 * pc map is read without waiting for its lock (the oops may have
 * interrupted the holder): an address it cannot name then says so.
 * Reading the stack uses copy_from_kernel_nofault, so a bad stack pointer
 * costs a line, never a second fault. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/kdebug.h>
#include <linux/notifier.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include "crash_report.h"
#include "kjit/engine.h"

#define STACK_WORDS 64

static void name_cache_address(const char *what, unsigned long addr)
{
	unsigned long orig = (unsigned long)kjit_engine_original_pc_nowait(addr);

	if (orig)
		pr_emerg("%s %px in the code cache is the translation of %pS\n", what, (void *)addr, (void *)orig);
	else
		pr_emerg("%s %px in the code cache: original unknown (engine busy, or code kjit added)\n",
			 what, (void *)addr);
}

static int kjit_die_event(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args ? args->regs : NULL;
	unsigned long sp, word;
	int i;

	if (val != DIE_OOPS || !regs || user_mode(regs))
		return NOTIFY_DONE;
	if (kjit_engine_is_cache_address(instruction_pointer(regs)))
		name_cache_address("RIP", instruction_pointer(regs));
	sp = kernel_stack_pointer(regs);
	for (i = 0; i < STACK_WORDS; i++) {
		if (copy_from_kernel_nofault(&word, (void *)(sp + i * sizeof(word)), sizeof(word)))
			break;
		if (kjit_engine_is_cache_address(word))
			name_cache_address("stack", word);
	}
	return NOTIFY_DONE;
}

static struct notifier_block kjit_die_nb = { .notifier_call = kjit_die_event };

int kjit_crash_report_init(void)
{
	return register_die_notifier(&kjit_die_nb);
}

void kjit_crash_report_exit(void)
{
	unregister_die_notifier(&kjit_die_nb);
}
