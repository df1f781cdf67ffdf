/* SPDX-License-Identifier: GPL-2.0 */
/* percpu_mem.c: the engine's per-CPU data window (kjit_alloc_percpu).
 * Bottom layer, beside cache_mem. */
#ifndef KJIT_PERCPU_MEM_H
#define KJIT_PERCPU_MEM_H

#include "kjit/os_shim.h"

/* Fills mem->percpu_*.  Never fails the load: without a window (no memory
 * for its host views) the fields stay 0 and plugins fall back to kjit_alloc. */
void kjit_percpu_mem_init(struct kjit_os_memory *mem);
void kjit_percpu_mem_exit(void);

#endif
