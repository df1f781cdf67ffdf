/* SPDX-License-Identifier: GPL-2.0 */
/* Size of the code-cache section (shared by cache_area.S and cache_mem.c). */
#ifndef KJIT_CACHE_AREA_H
#define KJIT_CACHE_AREA_H
#define KJIT_CACHE_MAX_BYTES 0x800000
#define KJIT_CACHE_MAX ((unsigned long)KJIT_CACHE_MAX_BYTES)
#endif
