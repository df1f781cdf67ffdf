// SPDX-License-Identifier: GPL-2.0
/* Oopses in translated code name the original code.
 *
 * An oops whose RIP is in the code cache prints
 * "RIP: 0010:kjit-code-cache+0x..." and, since the cache has no unwind
 * information, only "?" frames after it: nobody could tell which kernel
 * function was running.  A die notifier (DIE_OOPS: after the kernel printed
 * its registers, trace and modules, before it decides to panic) adds, in
 * the kernel's own formats:
 *
 *   kjit: RIP: 0010:do_sys_openat2+0x1d/0x160 translated at ffffffffc033e107
 *   kjit: the same frames in the original code:
 *    do_sys_openat2+0x1d/0x160
 *    __x64_sys_openat+0x6b/0xa0
 *    ...
 *
 * so that a reader, and a report parser that names a crash after the first
 * "RIP: FUNC+" line and checks for frames after "Call Trace:" (syzkaller's
 * pkg/report; the cache's own symbol is no identifier, see cache_area.S),
 * see the original function.  The frames come from the kernel's unwinder
 * run on a copy of the oops registers whose ip is the original
 * instruction: a copied instruction runs with the stack pointer the
 * original would have (it may address the stack), and the stack holds
 * original return addresses, so the original's ORC data unwinds the
 * translation.  A frame the unwinder cannot read ends the list.  Then every
 * code-cache address among the stack words above the fault is named, the
 * way the kernel's own trace lists "?" frames.  The engine's pc map is read
 * without waiting for its lock (the oops may have interrupted the holder):
 * an address it cannot name then says so.  Reading the stack uses
 * copy_from_kernel_nofault, so a bad stack pointer costs a line, never a
 * second fault. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/kdebug.h>
#include <linux/notifier.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <asm/unwind.h>
#include "crash_report.h"
#include "kjit/engine.h"

#define STACK_WORDS 64
#define ORIGINAL_FRAMES 32

/* Frame lines carry no "kjit: " prefix: " FUNC+0xOFF/0xSIZE [module]" is
 * the kernel's trace format, which parsers read as a frame. */
static void print_original_frames(const struct pt_regs *regs, unsigned long orig_ip)
{
	struct pt_regs at_original = *regs;
	struct unwind_state state;
	unsigned long ret;
	int n;

	at_original.ip = orig_ip;
	pr_emerg("the same frames in the original code:\n");
	printk(KERN_EMERG " %pS\n", (void *)orig_ip);
	unwind_start(&state, current, &at_original, NULL);
	for (n = 0; n < ORIGINAL_FRAMES && !unwind_done(&state) && !unwind_error(&state); n++) {
		ret = unwind_get_return_address(&state);
		if (!ret || kjit_engine_is_cache_address(ret))
			break;
		printk(KERN_EMERG " %pB\n", (void *)ret);
		unwind_next_frame(&state);
	}
}

static void name_stack_word(unsigned long addr)
{
	unsigned long orig = (unsigned long)kjit_engine_original_pc_nowait(addr);

	if (orig)
		pr_emerg("stack %px in the code cache is the translation of %pS\n", (void *)addr, (void *)orig);
	else
		pr_emerg("stack %px in the code cache: original unknown (engine busy, or code kjit added)\n",
			 (void *)addr);
}

static void name_rip(struct pt_regs *regs)
{
	unsigned long ip = instruction_pointer(regs);
	unsigned long orig = (unsigned long)kjit_engine_original_pc_nowait(ip);

	if (!orig) {
		pr_emerg("RIP %px in the code cache: original unknown (engine busy, or code kjit added)\n",
			 (void *)ip);
		return;
	}
	pr_emerg("RIP: %04x:%pS translated at %px\n", (unsigned int)(regs->cs & 0xffff), (void *)orig,
		 (void *)ip);
	print_original_frames(regs, orig);
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
		name_rip(regs);
	sp = kernel_stack_pointer(regs);
	for (i = 0; i < STACK_WORDS; i++) {
		if (copy_from_kernel_nofault(&word, (void *)(sp + i * sizeof(word)), sizeof(word)))
			break;
		if (kjit_engine_is_cache_address(word))
			name_stack_word(word);
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
