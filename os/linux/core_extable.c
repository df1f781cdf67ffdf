// SPDX-License-Identifier: GPL-2.0
/* The core kernel's exception table, a block at a time.
 *
 * The builder asks kjit_os_classify_site about every instruction it
 * copies.  search_exception_tables answers from the core table with a
 * bsearch whose comparisons go through a function pointer (a retpoline
 * each), about 300 instructions per question, and then asks the modules'
 * and BPF's tables.  Core text is in neither of those, and its table
 * (__ex_table, about 500 entries) is sorted at build time or boot and never
 * changes: here one search finds the sites around an address and the gap
 * between them is remembered, so the rest of a block's instructions cost a
 * comparison each.
 *
 * The memo is only touched with the engine lock held (the builder's
 * callers), which serialises it. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/extable.h>
#include <asm/extable.h>
#include "core_extable.h"
#include "symbols.h"

static const struct exception_table_entry *ex_start, *ex_stop;
static unsigned long core_lo, core_hi;
/* No entry's instruction is in [gap_lo, gap_hi). */
static unsigned long gap_lo, gap_hi;

static unsigned long ex_insn(const struct exception_table_entry *e)
{
	return (unsigned long)&e->insn + e->insn;
}

void kjit_core_extable_init(unsigned long stext, unsigned long etext,
			    const struct exception_table_entry *(*search)(unsigned long addr))
{
	const struct exception_table_entry *s, *e, *x;

	ex_start = ex_stop = NULL;
	gap_lo = gap_hi = 0;
	s = (void *)kjit_ksym("__start___ex_table");
	e = (void *)kjit_ksym("__stop___ex_table");
	if (!s || !e || e < s)
		goto off;
	for (x = s; x + 1 < e; x++)
		if (ex_insn(x) > ex_insn(x + 1))
			goto off;
	ex_start = s;
	ex_stop = e;
	core_lo = stext;
	core_hi = etext;
	/* Every site, and the byte after it, answered as the kernel's own
	 * search answers them. */
	for (x = s; x < e; x++) {
		unsigned long a = ex_insn(x);

		if (a < stext || a >= etext)
			continue;
		if (kjit_core_extable_site(a) != 1 ||
		    kjit_core_extable_site(a + 1) != !!search(a + 1)) {
			pr_err("core exception table: %pS answered unlike search_exception_tables\n", (void *)a);
			ex_start = ex_stop = NULL;
			return;
		}
	}
	gap_lo = gap_hi = 0;
	return;
off:
	pr_info("core exception table not found or not sorted: every site is searched\n");
}

int kjit_core_extable_site(unsigned long addr)
{
	const struct exception_table_entry *lo, *hi;

	if (!ex_start || addr < core_lo || addr >= core_hi)
		return -1;
	if (addr >= gap_lo && addr < gap_hi)
		return 0;
	/* The first entry at or above addr. */
	lo = ex_start;
	hi = ex_stop;
	while (lo < hi) {
		const struct exception_table_entry *mid = lo + (hi - lo) / 2;

		if (ex_insn(mid) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ex_stop && ex_insn(lo) == addr)
		return 1;
	gap_lo = lo > ex_start ? ex_insn(lo - 1) + 1 : core_lo;
	gap_hi = lo < ex_stop ? ex_insn(lo) : core_hi;
	return 0;
}
