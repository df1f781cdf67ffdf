/* SPDX-License-Identifier: GPL-2.0 */
/* cache_mem.c: the code cache (module text, RO+X) + its RW alias, the data
 * window and the arena.  Bottom layer. */
#ifndef KJIT_CACHE_MEM_H
#define KJIT_CACHE_MEM_H

#include "kjit/os_shim.h"

int kjit_mem_init(struct kjit_os_memory *mem);
void kjit_mem_exit(void);
int kjit_mem_selftest(void);
int kjit_mem_is_cache(unsigned long addr);
void kjit_mem_cache_range(unsigned long *lo, unsigned long *hi);

#endif
