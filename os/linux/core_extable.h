/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KJIT_CORE_EXTABLE_H
#define KJIT_CORE_EXTABLE_H
#include <linux/types.h>

struct exception_table_entry;

/* Finds the core kernel's exception table and checks its answers against
 * `search` (search_exception_tables); without it, unsorted or answering
 * otherwise, every question is left to `search`. */
void kjit_core_extable_init(unsigned long stext, unsigned long etext,
			    const struct exception_table_entry *(*search)(unsigned long addr));

/* Whether the core-kernel instruction at addr has an exception-table entry:
 * 1 or 0, or -1 when this table cannot say (addr outside core text, no
 * table).  Engine lock held (the memo is the builder's). */
int kjit_core_extable_site(unsigned long addr);

#endif
