/* SPDX-License-Identifier: GPL-2.0 */
/* The code cache: a NOBITS, alloc+write+exec section, so the module loader
 * places it in the module's text (RO+X after load, zero-filled).  See
 * cache_mem.c for the writable alias.  Not an objtool object: objtool cannot
 * decode an executable section without file contents (it crashes), and the
 * cache holds no code at build time. */
#include "cache_area.h"
	.pushsection .kjit_cache, "ax", @nobits
	.balign 4096
	.globl kjit_cache_area
kjit_cache_area:
	.skip KJIT_CACHE_MAX_BYTES
	.size kjit_cache_area, KJIT_CACHE_MAX_BYTES
	.popsection
