/* SPDX-License-Identifier: GPL-2.0 */
/* extable.c: the module's dynamic exception table (user-access sites
 * mirrored into the cache).  Bottom layer; it also implements the shim's
 * kjit_os_mirror_extable (include/kjit/os_shim.h). */
#ifndef KJIT_EXTABLE_H
#define KJIT_EXTABLE_H

#include <linux/types.h>

int kjit_extable_init(void);
void kjit_extable_exit(void);
void kjit_extable_reset(void);
/* the engine's two cache halves, after kjit_engine_init; may sleep */
int kjit_extable_layout(u64 lo0, u64 hi0, u64 lo1, u64 hi1);
void kjit_extable_code_written(unsigned long addr, unsigned long len);
void kjit_extable_retire(unsigned long lo, unsigned long hi);   /* engine lock held */
void kjit_extable_stats(u64 *mirrored, u64 *declined, u64 *entries);

#endif
