/* SPDX-License-Identifier: GPL-2.0 */
/* Sizes of the code-cache and call-stub sections (shared by cache_area.S,
 * cache_mem.c and ksym_call.c). */
#ifndef KJIT_CACHE_AREA_H
#define KJIT_CACHE_AREA_H
#define KJIT_CACHE_MAX_BYTES 0x800000
#define KJIT_CACHE_MAX ((unsigned long)KJIT_CACHE_MAX_BYTES)
#define KJIT_CALL_STUB_BYTES 0x1000
#endif
