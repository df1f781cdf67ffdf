// SPDX-License-Identifier: GPL-2.0
/* Where a function's fentry call sits.
 *
 * Without IBT a traceable function starts with `call __fentry__` (a NOP5
 * while untraced).  With CONFIG_X86_KERNEL_IBT it starts with endbr64 and
 * the site is at +4; functions that are never called indirectly have no
 * ENDBR and keep the site at +0, and on a CPU that enforces IBT the kernel
 * overwrites the ENDBR of those it proved never called indirectly with a
 * 4-byte NOP at boot.  ftrace itself finds the site from the function's
 * start (ftrace_location maps sym+0 to the record); kjit accepts exactly
 * these two layouts, read from the live bytes, and keys everything on the
 * site: ftrace's ip, the trampoline's [rsp] - 5, the entry table. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/uaccess.h>
#include "fentry.h"
#include "symbols.h"

#define ENDBR_LEN 4

static unsigned long (*p_ftrace_location)(unsigned long ip);

int kjit_fentry_init(void)
{
	p_ftrace_location = kjit_ksym_fn("ftrace_location");
	if (!p_ftrace_location)
		pr_warn("ftrace_location not found: attach refused\n");
	return 0;
}

bool kjit_is_endbr(u32 insn)
{
	switch (insn) {
	case 0xfa1e0ff3:   /* endbr64 */
	case 0xfb1e0ff3:   /* endbr32 */
	case 0x001f0f66:   /* osp nopl (%rax): a sealed ENDBR */
	case 0xd6401f0f:   /* nopl -42(%rax): the same on later kernels */
		return true;
	}
	return false;
}

static bool endbr_at(unsigned long addr)
{
	u32 insn;

	return !get_kernel_nofault(insn, (u32 *)addr) && kjit_is_endbr(insn);
}

unsigned long kjit_ftrace_location(unsigned long addr)
{
	return p_ftrace_location ? p_ftrace_location(addr) : 0;
}

unsigned long kjit_fentry_site(unsigned long func)
{
	unsigned long site = kjit_ftrace_location(func);

	if (site == func || (site == func + ENDBR_LEN && endbr_at(func)))
		return site;
	return 0;
}

unsigned long kjit_fentry_func(unsigned long site)
{
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) && site && endbr_at(site - ENDBR_LEN))
		return site - ENDBR_LEN;
	return site;
}
